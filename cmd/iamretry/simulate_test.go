package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

func TestSimulateGolden(t *testing.T) {
	r := runCmd(t, "simulate", "--seed", "1", "--contention")
	if r.code != exitOK {
		t.Fatalf("simulate exited %d: %s", r.code, r.stderr)
	}
	golden(t, "simulate.golden", r.stdout)
	again := runCmd(t, "simulate", "--seed", "1", "--contention")
	if again.stdout != r.stdout {
		t.Error("the same seed gave a different table")
	}
}

func TestSimulateShowsTheHerd(t *testing.T) {
	r := runCmd(t, "simulate", "--clients", "200", "--outage", "5s", "--capacity", "20")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// no-jitter's retries come as one wave of every client; jitter spreads them.
	var noJitter, documented []string
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "no-jitter":
			noJitter = f
		case "documented":
			documented = f
		}
	}
	if noJitter == nil || documented == nil {
		t.Fatalf("table lacks rows:\n%s", r.stdout)
	}
	if noJitter[3] != "200" {
		t.Errorf("no-jitter retry peak %s, want all 200 clients at once", noJitter[3])
	}
	if documented[3] == "200" {
		t.Errorf("documented retry peak %s: jitter did not spread the retries", documented[3])
	}
}

func TestSimulatePlot(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"herd.svg", "herd.PNG"} {
		path := filepath.Join(dir, name)
		r := runCmd(t, "simulate", "--clients", "100", "--plot", path)
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Size() == 0 {
			t.Fatalf("plot %s not written: %v", path, err)
		}
		if !strings.Contains(r.stdout, "wrote "+path) {
			t.Errorf("no word of the plot in:\n%s", r.stdout)
		}
	}
}

// TestSimulateContentionSeeds: --seeds summarises the contention runs per
// strategy; the Updater's default schedule gives no change up at 200
// clients over these seeds (issue 28).
func TestSimulateContentionSeeds(t *testing.T) {
	r := runCmd(t, "simulate", "--contention", "--clients", "200", "--outage", "0s", "--seeds", "5")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "Over 5 seeds (1..5), 200 clients") {
		t.Fatalf("no summary in:\n%s", r.stdout)
	}
	lines := strings.Split(r.stdout[strings.Index(r.stdout, "Over 5 seeds"):], "\n")
	var row []string
	for _, l := range lines {
		if strings.HasPrefix(l, "scaled (default)") {
			row = strings.Fields(strings.TrimPrefix(l, "scaled (default)"))
		}
	}
	if len(row) != 5 {
		t.Fatalf("no scaled row in:\n%s", r.stdout)
	}
	if row[2] != "0" {
		t.Errorf("scaled: %s gave up on a seed, want 0:\n%s", row[2], r.stdout)
	}
	if bad := runCmd(t, "simulate", "--contention", "--seeds", "0"); bad.code == exitOK || !strings.Contains(bad.stderr, "--seeds 0") {
		t.Errorf("--seeds 0: exit %d, %s", bad.code, bad.stderr)
	}
}

// TestConflictReplay: the spreading strategies' waits are those of the
// library's Transact: the documented SpreadConflicts and ScaledConflicts
// schedules, capped at maximum_backoff, whatever order the calls come in;
// ScaledConflicts scaled to the read-modify-write's simulated duration,
// which the replay's reads and writes take (w = 100 ms before any rerun).
func TestConflictReplay(t *testing.T) {
	type step struct {
		n     int
		since time.Duration
		r     float64
		want  time.Duration
	}
	for _, tc := range []struct {
		schedule   interceptor.ConflictBackoff
		maxBackoff time.Duration
		service    time.Duration
		steps      []step
	}{
		{interceptor.SpreadConflicts, 20 * time.Second, 50 * time.Millisecond, []step{
			{0, 0, 0, 80 * time.Millisecond},                   // the first rerun's shortest wait
			{0, 5 * time.Second, 0.5, 1200 * time.Millisecond}, // its median, sqrt(80ms * 18s), whatever since
			{1, 7 * time.Second, 0, 20 * time.Second},          // full jitter over 27s - 7s
			{3, 17 * time.Second, 0.5, 5 * time.Second},        // half of 27s - 17s
			{2, time.Hour, 0, time.Second},                     // at least 1 s
			{1, 0, 0, 20 * time.Second},                        // 27 s, capped at maximum_backoff
		}},
		{interceptor.ScaledConflicts, 20 * time.Second, 50 * time.Millisecond, []step{
			{0, 0, 0, 75 * time.Millisecond},            // 3w/4 of 100 ms: nothing timed yet
			{0, 0, 0.6, 600 * time.Millisecond},         // 6w
			{1, 10 * time.Second, 0.5, 8 * time.Second}, // half of 26s - 10s
			{2, time.Hour, 0, time.Second},              // at least 1 s
			{1, time.Second, 0, 20 * time.Second},       // 25 s, capped at maximum_backoff
		}},
		{interceptor.ScaledConflicts, time.Hour, time.Second, []step{
			{0, 0, 0, 75 * time.Millisecond},                                     // still 100 ms: the first attempt is not timed
			{1, 10 * time.Second, 0, 90 * time.Second},                           // the horizon is 100w = 100 s
			{2, 200 * time.Second, 0, 10 * time.Second},                          // at least 10w
			{3, 10 * time.Second, 1 - 1e-12, 100*time.Second/6 - 10*time.Second}, // just above what is left of T/6
		}},
	} {
		x, err := newConflictReplay(tc.schedule, tc.maxBackoff, tc.service)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tc.steps {
			got := x.after(st.n, st.since, st.r)
			if d := got - st.want; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("%v, service %v: after(%d, %v, %v) = %v, want %v", tc.schedule, tc.service, st.n, st.since, st.r, got, st.want)
			}
		}
	}
}
