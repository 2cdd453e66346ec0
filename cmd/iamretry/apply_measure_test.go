package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestApplyMeasure is the closing note's measurement, not part of the
// default suite: IAMRETRY_MEASURE=1 go test -run TestApplyMeasure -v .
//
// Four apply processes start together on overlapping files (50 resources
// each, 5 grants a resource, 80 resources in all, most listed by two to
// four files, with different grants) against one fake-server that fails 20%
// of calls and loses 15% of the write answers. It reports the exit codes,
// the wall time, the writes per resource (all processes together), checks
// that every grant is present exactly once, and runs the four again: they
// must write nothing. The schedule is the guidance's, on the wall clock;
// IAMRETRY_MEASURE_SCALE=100 runs it 100 times faster.
func TestApplyMeasure(t *testing.T) {
	if os.Getenv("IAMRETRY_MEASURE") == "" {
		t.Skip("set IAMRETRY_MEASURE=1 to run the measurement")
	}
	applyTimeout = 15 * time.Minute // the real schedule: a 300 s deadline per resource
	scale := os.Getenv("IAMRETRY_MEASURE_SCALE")
	if scale == "" {
		scale = "1"
	}
	fake := startFakeProc(t, "--fail-rate", "0.2", "--codes", "UNAVAILABLE,INTERNAL,DEADLINE_EXCEEDED", "--lost-answer-rate", "0.15", "--seed", "23")
	const procs, perFile, total = 4, 50, 80
	roles := []string{"roles/viewer", "roles/editor", "roles/storage.objectViewer"}
	want := map[string]map[string]bool{} // resource -> "role member"
	files := make([]string, procs)
	for i := range procs {
		var b strings.Builder
		b.WriteString("resources:\n")
		for r := 10 * i; r < 10*i+perFile; r++ {
			res := fmt.Sprintf("projects/test-m%d", r)
			fmt.Fprintf(&b, "  - resource: %s\n    add:\n", res)
			if want[res] == nil {
				want[res] = map[string]bool{}
			}
			for k := range 5 {
				role, member := roles[(r+k)%len(roles)], fmt.Sprintf("user:p%d-k%d@example.com", (i+k)%procs, k)
				fmt.Fprintf(&b, "      - {role: %s, member: %q}\n", role, member)
				want[res][role+" "+member] = true
			}
		}
		files[i] = writeTemp(t, fmt.Sprintf("m%d.yaml", i), b.String())
	}
	runAll := func() ([]procResult, time.Duration) {
		var wg sync.WaitGroup
		out := make([]procResult, procs)
		took := make([]time.Duration, procs)
		start := time.Now()
		for i := range procs {
			wg.Go(func() {
				out[i] = applyProc(t, "", "apply", "-f", files[i], "--json", "--endpoint", fake.grpcAddr, "--insecure", "--time-scale", scale)
				took[i] = time.Since(start).Round(time.Millisecond)
			})
		}
		wg.Wait()
		t.Logf("process wall times: %v", took)
		return out, time.Since(start)
	}
	first, wall := runAll()
	writes := map[string]int{}
	attempts := map[string]int{}
	for i, r := range first {
		if r.code != exitOK {
			t.Errorf("process %d: exit %d:\n%s", i, r.code, r.stderr)
		}
		if r.stdout == "" {
			continue
		}
		for res, ev := range byResource(t, r.stdout) {
			writes[res] += int(ev["writes"].(float64))
			attempts[res] += int(ev["attempts"].(float64))
		}
	}
	var ws []int
	sum := 0
	for _, w := range writes {
		ws = append(ws, w)
		sum += w
	}
	slices.Sort(ws)
	hist := map[int]int{}
	for _, w := range ws {
		hist[w]++
	}
	t.Logf("first run: %d processes, exit codes %v, wall time %v", procs, codesOf(first), wall.Round(time.Millisecond))
	t.Logf("writes per resource (all processes): min %d, median %d, max %d, mean %.2f, total %d over %d resources; histogram %v",
		ws[0], ws[len(ws)/2], ws[len(ws)-1], float64(sum)/float64(len(ws)), sum, len(ws), hist)
	// Each process listing a resource has grants of its own to add, so a
	// resource needs at least one write per process that lists it; the
	// rest are writes that conflicted or lost their answer.
	listedBy := map[string]int{}
	for i := range procs {
		for r := 10 * i; r < 10*i+perFile; r++ {
			listedBy[fmt.Sprintf("projects/test-m%d", r)]++
		}
	}
	for n := 1; n <= procs; n++ {
		res, w := 0, 0
		for name, c := range listedBy {
			if c == n {
				res++
				w += writes[name]
			}
		}
		if res > 0 {
			t.Logf("resources listed by %d file(s): %d, writes a resource %.2f (at least %d needed)", n, res, float64(w)/float64(res), n)
		}
	}
	at := 0
	for _, a := range attempts {
		at += a
	}
	t.Logf("read-modify-write attempts: %d in all (%.2f a resource-process)", at, float64(at)/float64(procs*perFile))

	bad := 0
	for r := range total {
		res := fmt.Sprintf("projects/test-m%d", r)
		seen := map[string]int{}
		for _, b := range fake.policyOf(t, res).GetBindings() {
			for _, m := range b.GetMembers() {
				seen[b.GetRole()+" "+m]++
			}
		}
		for g := range want[res] {
			if seen[g] != 1 {
				bad++
				t.Errorf("%s: %s present %d times", res, g, seen[g])
			}
		}
		for g := range seen {
			if !want[res][g] {
				bad++
				t.Errorf("%s: unexpected %s", res, g)
			}
		}
	}
	t.Logf("grants checked: %d resources, every grant present exactly once: %v", total, bad == 0)

	second, wall2 := runAll()
	w2 := 0
	for i, r := range second {
		if r.code != exitOK {
			t.Errorf("second run, process %d: exit %d:\n%s", i, r.code, r.stderr)
		}
		w2 += int(applySummaryOf(t, r.stdout)["writes"].(float64))
	}
	t.Logf("second run: exit codes %v, %d writes, wall time %v", codesOf(second), w2, wall2.Round(time.Millisecond))
	if w2 != 0 {
		t.Errorf("the second run wrote %d times", w2)
	}
}

func codesOf(rs []procResult) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.code)
	}
	return out
}
