package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// summaryOf returns the demo's summary: everything from the "Summary" line.
func summaryOf(t *testing.T, out string) string {
	t.Helper()
	i := strings.Index(out, "\nSummary\n")
	if i < 0 {
		t.Fatalf("no summary in the demo's output:\n%s", out)
	}
	return out[i+1:]
}

func TestDemoSummaryGolden(t *testing.T) {
	r := runCmd(t, "demo")
	if r.code != exitOK {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Error("colour escapes in output that is not a terminal")
	}
	golden(t, "demo_summary.golden", summaryOf(t, r.stdout))
}

// TestDemoDeterministic runs the demo twice: on the virtual clock, even the
// race of five writers comes out the same, to the millisecond.
func TestDemoDeterministic(t *testing.T) {
	a, b := runCmd(t, "demo"), runCmd(t, "demo")
	if a.stdout != b.stdout {
		t.Errorf("two runs differ:\n--- first\n%s\n--- second\n%s", a.stdout, b.stdout)
	}
	c := runCmd(t, "demo", "--seed", "7")
	if c.code != exitOK {
		t.Fatalf("demo --seed 7 exited %d:\n%s", c.code, c.stdout)
	}
	if c.stdout == a.stdout {
		t.Error("another seed gave the same timeline: the jitter is not drawn from the seed")
	}
}

func TestDemoTellsTheStory(t *testing.T) {
	r := runCmd(t, "demo")
	for _, want := range []string{
		"0. The documented schedule",
		"32s .. 32s   (truncated at maximum_backoff)",
		"IAMPolicy.GetIamPolicy               1  UNAVAILABLE        503  Transient   retry",
		"INTERNAL           500",
		"DEADLINE_EXCEEDED  504",
		"IAM.GetServiceAccount                1  NOT_FOUND          404  Propagation retry",
		"IAM.CreateServiceAccountKey          1  UNAVAILABLE        503  Transient   give up: unsafe to retry",
		"policy.Update",
		"rerun read-modify-write",
		"give up: retry deadline reached",
		"Every step behaved as Google's IAM retry guidance says.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "✗") {
		t.Errorf("a failed check:\n%s", r.stdout)
	}
}

func TestDemoJSON(t *testing.T) {
	r := runCmd(t, "demo", "--json")
	if r.code != exitOK {
		t.Fatalf("demo --json exited %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	types := map[string]int{}
	var last map[string]any
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		typ, _ := v["type"].(string)
		types[typ]++
		last = v
	}
	for typ, min := range map[string]int{"schedule_info": 1, "schedule": 6, "step": 6, "attempt": 20, "note": 1, "result": 6, "summary": 1} {
		if types[typ] < min {
			t.Errorf("%d lines of type %q, want at least %d", types[typ], typ, min)
		}
	}
	if last["type"] != "summary" || last["ok"] != true {
		t.Errorf("last line %v, want the summary with ok true", last)
	}
	var a attemptRow
	for _, l := range lines {
		if strings.Contains(l, `"type":"attempt"`) && strings.Contains(l, "CreateServiceAccountKey") {
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a.Code != "UNAVAILABLE" || a.HTTP != 503 || a.Decision != "give up: unsafe to retry" || a.WaitMS != 0 {
		t.Errorf("CreateServiceAccountKey row %+v", a)
	}
}

func TestDocumentedSchedule(t *testing.T) {
	s := documentedSchedule()
	if s.MaxAttempts != 6 {
		t.Errorf("MaxAttempts %d, want 6 (waits 1+2+4+8+16 = 31 s at least, the next 32 s ends past 60 s)", s.MaxAttempts)
	}
	wantBase := []int64{1000, 2000, 4000, 8000, 16000, 32000}
	if len(s.Rows) != len(wantBase) {
		t.Fatalf("%d rows, want %d", len(s.Rows), len(wantBase))
	}
	for i, r := range s.Rows {
		if r.BaseMS != wantBase[i] || r.WaitMin != wantBase[i] {
			t.Errorf("row %d: %+v", i, r)
		}
		if !r.Truncated && r.WaitMax != wantBase[i]+999 {
			t.Errorf("row %d: wait max %d, want %d", i, r.WaitMax, wantBase[i]+999)
		}
	}
	if !s.Rows[5].Truncated {
		t.Error("the 32 s row is not marked truncated")
	}
}

// TestDemoContentionIsOneSchedule checks step 4 from the demo's JSON output:
// the server saw the attempts of one schedule, the Updaters'. Each attempt
// of an Updater is one GetIamPolicy and one SetIamPolicy; the interceptors
// beneath pass the Updaters' calls through, so no failed call of theirs
// shows up as an attempt of its own.
func TestDemoContentionIsOneSchedule(t *testing.T) {
	r := runCmd(t, "demo", "--json")
	if r.code != exitOK {
		t.Fatalf("demo --json exited %d: %s", r.code, r.stderr)
	}
	const step = 4
	var res stepResult
	var failedUpdates, okReads, okWrites, otherFailures int
	writers := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var head struct {
			Type string `json:"type"`
			Step int    `json:"step"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, l)
		}
		if head.Step != step {
			continue
		}
		switch head.Type {
		case "result":
			if err := json.Unmarshal([]byte(l), &res); err != nil {
				t.Fatal(err)
			}
		case "attempt":
			var a attemptRow
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatal(err)
			}
			writers[a.Who] = true
			switch {
			case a.Method == policy.UpdateMethod:
				failedUpdates++
			case a.Code == "OK" && strings.HasSuffix(a.Method, "/GetIamPolicy"):
				okReads++
			case a.Code == "OK" && strings.HasSuffix(a.Method, "/SetIamPolicy"):
				okWrites++
			default:
				otherFailures++
			}
		}
	}
	if !res.OK {
		t.Fatalf("step %d failed: %+v", step, res)
	}
	attempts := failedUpdates + len(writers) // every writer ended with one successful attempt
	if len(writers) != 5 || okWrites != 5 {
		t.Errorf("%d writers, %d successful writes; want 5 and 5", len(writers), okWrites)
	}
	if otherFailures != 0 {
		t.Errorf("%d failed attempts reported by an interceptor: it retried or judged a call the Updater owns", otherFailures)
	}
	if okReads != attempts {
		t.Errorf("%d successful reads, want one per Updater attempt (%d)", okReads, attempts)
	}
	if res.Calls != 2*attempts {
		t.Errorf("the server saw %d calls, want a read and a write per Updater attempt: 2 x %d", res.Calls, attempts)
	}
}
