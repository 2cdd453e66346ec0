package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// The binary reports; these tests check what each step claims, from the
// events of `iamretry demo --json`.

// demoRun is one run of `iamretry demo --json`, parsed.
type demoRun struct {
	start    demoStart
	info     scheduleInfo
	schedule []scheduleRow
	steps    map[int]*stepRun
	summary  summary
	types    map[string]int
	lastType string
}

// stepRun is the events of one step.
type stepRun struct {
	header   stepHeader
	attempts []attemptEvent
	notes    []noteEvent
	returned []returnedEvent
	calls    []serverCall
	policies []policyEvent
	result   stepResult
}

func runDemoJSON(t *testing.T, args ...string) *demoRun {
	t.Helper()
	r := runCmd(t, append([]string{"demo", "--json"}, args...)...)
	if r.code != exitOK { // the claims are checked all the same
		t.Errorf("demo --json %v exited %d: %s", args, r.code, r.stderr)
	}
	run := &demoRun{steps: map[int]*stepRun{}, types: map[string]int{}}
	for i, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var head struct {
			Type string `json:"type"`
			Step int    `json:"step"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, l)
		}
		run.types[head.Type]++
		run.lastType = head.Type
		st := run.steps[head.Step]
		if st == nil && head.Step > 0 {
			st = &stepRun{}
			run.steps[head.Step] = st
		}
		var err error
		switch head.Type {
		case "start":
			err = strictUnmarshal(l, &run.start)
		case "schedule_info":
			err = strictUnmarshal(l, &run.info)
		case "schedule":
			var row scheduleRow
			err = strictUnmarshal(l, &row)
			run.schedule = append(run.schedule, row)
		case "step":
			err = strictUnmarshal(l, &st.header)
		case "attempt":
			var a attemptEvent
			err = strictUnmarshal(l, &a)
			st.attempts = append(st.attempts, a)
		case "note":
			var n noteEvent
			err = strictUnmarshal(l, &n)
			st.notes = append(st.notes, n)
		case "returned":
			var rt returnedEvent
			err = strictUnmarshal(l, &rt)
			st.returned = append(st.returned, rt)
		case "call":
			var c serverCall
			err = strictUnmarshal(l, &c)
			st.calls = append(st.calls, c)
		case "policy":
			var p policyEvent
			err = strictUnmarshal(l, &p)
			st.policies = append(st.policies, p)
		case "result":
			err = strictUnmarshal(l, &st.result)
		case "summary":
			err = strictUnmarshal(l, &run.summary)
		case "metrics":
			err = strictUnmarshal(l, &metricsEvent{})
		default:
			t.Fatalf("line %d: unknown type %q", i+1, head.Type)
		}
		if err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, l)
		}
	}
	return run
}

// strictUnmarshal decodes a line into v, refusing fields v does not have
// (besides "type"): the tests read every field the demo writes.
func strictUnmarshal(line string, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		return err
	}
	delete(fields, "type")
	b, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// step returns step n's events, failing the test when the step did not run.
func (r *demoRun) step(t *testing.T, n int) *stepRun {
	t.Helper()
	st := r.steps[n]
	if st == nil || st.header.Step != n {
		t.Fatalf("no step %d in the demo's output", n)
	}
	return st
}

// onSchedule checks that the failed attempt a waits as the documented
// schedule says for its retry, a.Attempt-1.
func (r *demoRun) onSchedule(t *testing.T, a attemptEvent) {
	t.Helper()
	n := min(a.Attempt-1, len(r.schedule)-1)
	row := r.schedule[n]
	if a.WaitMS < row.WaitMin || a.WaitMS > row.WaitMax {
		t.Errorf("%s %s attempt %d waited %d ms; the schedule's retry %d waits %d..%d ms",
			a.Who, a.Method, a.Attempt, a.WaitMS, n, row.WaitMin, row.WaitMax)
	}
}

// failed returns the failed attempts of who (any who when who is "*").
func (s *stepRun) failed(who string) []attemptEvent {
	var out []attemptEvent
	for _, a := range s.attempts {
		if a.Code != "OK" && (who == "*" || a.Who == who) {
			out = append(out, a)
		}
	}
	return out
}

// countCalls counts the calls the fake answered to m with code ("" any).
func (s *stepRun) countCalls(m iamtest.Method, code string) int {
	n := 0
	for _, c := range s.calls {
		if c.Method == string(m) && (code == "" || c.Code == code) {
			n++
		}
	}
	return n
}

// grants returns how many times role is granted to member in the step's
// last policy of resource.
func (s *stepRun) grants(t *testing.T, resource, role, member string) int {
	t.Helper()
	var p *policyEvent
	for i := range s.policies {
		if s.policies[i].Resource == resource {
			p = &s.policies[i]
		}
	}
	if p == nil {
		t.Fatalf("step %d shows no policy of %s", s.header.Step, resource)
	}
	n := 0
	for _, b := range p.Bindings {
		if b.Role == role && b.Condition == "" {
			for _, m := range b.Members {
				if m == member {
					n++
				}
			}
		}
	}
	return n
}

// returnedAs checks what the step's calls returned: one returned event per
// want, in order, each as the guidance says. The codes the guidance says
// each call ends with are written here only: the demo reports, the tests
// judge.
func (s *stepRun) returnedAs(t *testing.T, want ...string) {
	t.Helper()
	if len(s.returned) != len(want) {
		t.Fatalf("step %d: %d calls returned, want %d: %+v", s.header.Step, len(s.returned), len(want), s.returned)
	}
	for i, r := range s.returned {
		if r.Code != want[i] {
			t.Errorf("step %d: %s returned %s, want %s", s.header.Step, r.Method, r.Code, want[i])
		}
	}
	if !s.result.OK {
		t.Errorf("step %d did not run to its end: %+v", s.header.Step, s.result)
	}
}

// TestDemoClaims checks each step's claims from the demo's JSON, for two
// seeds (the jitter differs; the claims may not).
func TestDemoClaims(t *testing.T) {
	for _, seed := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		run := runDemoJSON(t, "--seed", seed)
		t.Run("seed="+seed, func(t *testing.T) { checkDemoClaims(t, run) })
	}
}

func checkDemoClaims(t *testing.T, run *demoRun) {
	t.Run("0 the documented schedule", func(t *testing.T) {
		if run.info.MaxAttempts != 6 || run.info.DeadlineMS != 60000 || len(run.schedule) != 6 {
			t.Errorf("schedule %+v with %d rows", run.info, len(run.schedule))
		}
		if !run.summary.OK || run.lastType != "summary" || len(run.summary.Steps) != 7 {
			t.Errorf("the demo did not end with a good summary of 7 steps: %+v (last line %q)", run.summary, run.lastType)
		}
	})

	t.Run("1 transient failures wait on the documented schedule", func(t *testing.T) {
		s := run.step(t, 1)
		s.returnedAs(t, "OK")
		failed := s.failed("")
		want := []struct {
			code string
			http int
		}{{"UNAVAILABLE", 503}, {"INTERNAL", 500}, {"DEADLINE_EXCEEDED", 504}}
		if len(failed) != len(want) {
			t.Fatalf("%d failed attempts, want %d: %+v", len(failed), len(want), failed)
		}
		for i, a := range failed {
			if a.Code != want[i].code || a.HTTP != want[i].http || a.Class != "Transient" || a.Reason != "retry" || a.Attempt != i+1 {
				t.Errorf("attempt %d: %+v", i+1, a)
			}
			run.onSchedule(t, a)
		}
		if n, ok := s.countCalls(iamtest.MethodGetIamPolicy, ""), s.countCalls(iamtest.MethodGetIamPolicy, "OK"); n != 4 || ok != 1 {
			t.Errorf("the fake saw %d GetIamPolicy calls, %d OK; want 4, 1", n, ok)
		}
	})

	t.Run("2 NOT_FOUND retried because the call opted in", func(t *testing.T) {
		s := run.step(t, 2)
		s.returnedAs(t, "OK")
		failed := s.failed("")
		if len(failed) != 2 {
			t.Fatalf("%d failed attempts, want 2: %+v", len(failed), failed)
		}
		for _, a := range failed {
			if a.Code != "NOT_FOUND" || a.HTTP != 404 || a.Class != "Propagation" || a.Reason != "retry" {
				t.Errorf("%+v", a)
			}
			run.onSchedule(t, a)
		}
		if n, nf := s.countCalls(iamtest.MethodGetServiceAccount, ""), s.countCalls(iamtest.MethodGetServiceAccount, "NOT_FOUND"); n != 3 || nf != 2 {
			t.Errorf("the fake saw %d GetServiceAccount calls, %d NOT_FOUND; want 3, 2", n, nf)
		}
	})

	t.Run("3 CreateServiceAccountKey is not retried", func(t *testing.T) {
		s := run.step(t, 3)
		s.returnedAs(t, "UNAVAILABLE")
		failed := s.failed("")
		if len(failed) != 1 || failed[0].Reason != "unsafe" || failed[0].Decision != "give up: unsafe to retry" || failed[0].WaitMS != 0 {
			t.Errorf("failed attempts %+v, want one given up as unsafe", failed)
		}
		if n := s.countCalls(iamtest.MethodCreateServiceAccountKey, ""); n != 1 || len(s.calls) != 1 {
			t.Errorf("%d CreateServiceAccountKey calls (%d in all), want exactly 1", n, len(s.calls))
		}
	})

	t.Run("4 writers race: one schedule's attempts, every change once", func(t *testing.T) {
		s := run.step(t, 4)
		s.returnedAs(t, "OK", "OK", "OK", "OK", "OK")
		// One owner per call: each Updater attempt is one GetIamPolicy and
		// one SetIamPolicy; the interceptors beneath pass the Updaters'
		// calls through, so no failed call of theirs shows up on its own.
		writers := map[string]bool{}
		var reruns, okReads, okWrites, other int
		for _, a := range s.attempts {
			writers[a.Who] = true
			switch {
			case a.Method == policy.UpdateMethod && a.Code == "ABORTED" && a.Class == "Conflict" && a.Reason == "retry":
				reruns++
				if a.WaitMS <= 0 {
					t.Errorf("a rerun without a wait: %+v", a)
				}
			case a.Code == "OK" && strings.HasSuffix(a.Method, "/GetIamPolicy"):
				okReads++
			case a.Code == "OK" && strings.HasSuffix(a.Method, "/SetIamPolicy"):
				okWrites++
			default:
				other++
				t.Errorf("an attempt that is no part of the Updaters' schedule: %+v", a)
			}
		}
		attempts := reruns + len(writers) // every writer ended with one successful attempt
		if len(writers) != 5 || okWrites != 5 || okReads != attempts {
			t.Errorf("%d writers, %d good writes, %d good reads for %d attempts", len(writers), okWrites, okReads, attempts)
		}
		reads, writes := s.countCalls(iamtest.MethodGetIamPolicy, ""), s.countCalls(iamtest.MethodSetIamPolicy, "")
		aborted, landed := s.countCalls(iamtest.MethodSetIamPolicy, "ABORTED"), s.countCalls(iamtest.MethodSetIamPolicy, "OK")
		if reads != attempts || writes != attempts || len(s.calls) != 2*attempts || s.result.Calls != 2*attempts {
			t.Errorf("the fake saw %d reads, %d writes, %d calls; want %d each, 2x in all", reads, writes, len(s.calls), attempts)
		}
		if aborted == 0 || aborted != reruns || landed != 5 {
			t.Errorf("%d writes ABORTED (%d reruns), %d landed; want conflicts, each rerun, and 5 landed", aborted, reruns, landed)
		}
		for i := 1; i <= 5; i++ {
			if n := s.grants(t, demoPolicyResource, "roles/viewer", writerMember(i)); n != 1 {
				t.Errorf("%s holds roles/viewer %d times, want 1", writerMember(i), n)
			}
		}
		if n := s.grants(t, demoPolicyResource, "roles/owner", "user:owner@example.com"); n != 1 {
			t.Errorf("the binding that was there before is there %d times: a blind overwrite", n)
		}
	})

	t.Run("5 a lost answer: granted once", func(t *testing.T) {
		s := run.step(t, 5)
		s.returnedAs(t, "OK")
		if lost, ok := s.countCalls(iamtest.MethodAdminSetIamPolicy, "UNAVAILABLE"), s.countCalls(iamtest.MethodAdminSetIamPolicy, "OK"); lost != 1 || ok != 0 {
			t.Errorf("%d lost answers, %d good writes after it; want 1 and none (the rerun read the grant there)", lost, ok)
		}
		failed := s.failed("")
		if len(failed) != 1 || failed[0].Method != policy.UpdateMethod || failed[0].Reason != "retry" {
			t.Errorf("failed attempts %+v, want one rerun of the read-modify-write", failed)
		}
		account := "projects/demo-project/serviceAccounts/deployer@demo-project.iam.gserviceaccount.com"
		if n := s.grants(t, account, "roles/iam.serviceAccountUser", "user:alice@example.com"); n != 1 {
			t.Errorf("the member holds the role %d times, want once", n)
		}
	})

	t.Run("6 an outage: gives up at the deadline with the server's error", func(t *testing.T) {
		s := run.step(t, 6)
		s.returnedAs(t, "UNAVAILABLE") // the server's last error, not a deadline error of the Retrier's own
		failed := s.failed("")
		if len(failed) != run.info.MaxAttempts || s.countCalls(iamtest.MethodGetIamPolicy, "") != run.info.MaxAttempts {
			t.Fatalf("%d failed attempts, %d calls; want %d each", len(failed), len(s.calls), run.info.MaxAttempts)
		}
		for _, a := range failed[:len(failed)-1] {
			if a.Reason != "retry" {
				t.Errorf("%+v", a)
			}
			run.onSchedule(t, a)
		}
		last := failed[len(failed)-1]
		next := run.schedule[min(last.Attempt-1, len(run.schedule)-1)].WaitMin
		if last.Reason != "deadline" || last.WaitMS != 0 {
			t.Errorf("the last attempt %+v, want a give-up at the deadline", last)
		}
		// It gave up at once: before the deadline, because the shortest
		// next wait would end past it.
		if last.ElapsedMS >= run.info.DeadlineMS || last.ElapsedMS+next <= run.info.DeadlineMS || s.result.TookMS >= run.info.DeadlineMS {
			t.Errorf("gave up %d ms after the first failure (the next wait at least %d ms, the step took %d ms); deadline %d ms",
				last.ElapsedMS, next, s.result.TookMS, run.info.DeadlineMS)
		}
	})

	t.Run("7 a grant to a new account lands after it propagates", func(t *testing.T) {
		s := run.step(t, 7)
		s.returnedAs(t, "INVALID_ARGUMENT", "OK")
		if msg := s.returned[0].Error; !strings.Contains(msg, "does not exist") || !strings.Contains(msg, "WithRetryNotFound") {
			t.Errorf("without the opt-in the error %q does not name the opt-in", msg)
		}
		// Without the opt-in: one attempt, refused, returned at once.
		plain := s.failed("plain")
		if len(plain) != 1 || plain[0].Code != "INVALID_ARGUMENT" || plain[0].Class != "Propagation" || plain[0].Reason != "not_retryable" {
			t.Errorf("without the opt-in: %+v, want one INVALID_ARGUMENT not retried", plain)
		}
		// With it: reruns on the documented schedule until the account is
		// visible, then the grant lands.
		optIn := s.failed("opt-in")
		if len(optIn) == 0 {
			t.Fatal("the opt-in Updater was never refused: the account was visible at once")
		}
		for _, a := range optIn {
			if a.Code != "INVALID_ARGUMENT" || a.Class != "Propagation" || a.Reason != "retry" {
				t.Errorf("%+v", a)
			}
			run.onSchedule(t, a)
		}
		var created, lastRefused, landed int64 = -1, -1, -1
		for _, c := range s.calls {
			switch {
			case c.Method == string(iamtest.MethodCreateServiceAccount):
				created = c.AtMS
			case c.Method == string(iamtest.MethodSetIamPolicy) && c.Code == "INVALID_ARGUMENT":
				lastRefused = c.AtMS
			case c.Method == string(iamtest.MethodSetIamPolicy) && c.Code == "OK":
				if landed >= 0 {
					t.Errorf("a second write landed at %d ms", c.AtMS)
				}
				landed = c.AtMS
			}
		}
		window := demoPropagation.Milliseconds()
		if created < 0 || lastRefused < 0 || landed < 0 || lastRefused >= created+window || landed < created+window {
			t.Errorf("created at %d ms, last refused at %d, landed at %d: want refusals within the %d ms window, the grant after it",
				created, lastRefused, landed, window)
		}
		if refused := s.countCalls(iamtest.MethodSetIamPolicy, "INVALID_ARGUMENT"); refused != 1+len(optIn) {
			t.Errorf("%d writes refused, want 1 without the opt-in and %d with it", refused, len(optIn))
		}
		member := "serviceAccount:publisher@demo-project.iam.gserviceaccount.com"
		if n := s.grants(t, demoPolicyResource, "roles/pubsub.publisher", member); n != 1 {
			t.Errorf("the new account holds the role %d times, want once", n)
		}
	})
}

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

// TestDemoFits100Columns: no line of the demo's text is wider than 100
// columns, whatever the seed, with the instruments too.
func TestDemoFits100Columns(t *testing.T) {
	for _, args := range [][]string{{"demo"}, {"demo", "--seed", "7", "--metrics"}} {
		r := runCmd(t, args...)
		if r.code != exitOK {
			t.Fatalf("%v exited %d: %s", args, r.code, r.stderr)
		}
		for i, l := range strings.Split(r.stdout, "\n") {
			if n := utf8.RuneCountInString(l); n > textWidth {
				t.Errorf("%v line %d is %d columns wide:\n%s", args, i+1, n, l)
			}
		}
	}
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
		"GetIamPolicy              1  503 UNAVAILABLE        Transient    retry in ",
		"500 INTERNAL ",
		"504 DEADLINE_EXCEEDED ",
		"GetServiceAccount         1  404 NOT_FOUND          Propagation  retry in ",
		"CreateServiceAccountKey   1  503 UNAVAILABLE        Transient    give up: unsafe",
		"writer-2 policy.Update ",
		"rerun in ",
		"give up: deadline",
		"7. Create an account, grant it a role at once",
		"plain policy.Update       1  400 INVALID_ARGUMENT   Propagation  give up: not retryable",
		"opt-in policy.Update      1  400 INVALID_ARGUMENT   Propagation  rerun in ",
		"→ opt-in policy.Update returned OK",
		"Every step ran to its end.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	if strings.Contains(r.stdout, "✗") {
		t.Errorf("a step failed:\n%s", r.stdout)
	}
}

func TestDemoJSON(t *testing.T) {
	run := runDemoJSON(t)
	for typ, n := range map[string]int{"start": 1, "schedule_info": 1, "schedule": 6, "step": 7, "result": 7, "summary": 1} {
		if run.types[typ] != n {
			t.Errorf("%d lines of type %q, want %d", run.types[typ], typ, n)
		}
	}
	for typ, min := range map[string]int{"attempt": 30, "note": 5, "returned": 12, "call": 40, "policy": 3} {
		if run.types[typ] < min {
			t.Errorf("%d lines of type %q, want at least %d", run.types[typ], typ, min)
		}
	}
	if run.start.Seed != 1 || run.start.RTTMS != 50 || run.start.RealTime {
		t.Errorf("start %+v", run.start)
	}
	withMetrics := runDemoJSON(t, "--metrics")
	if withMetrics.types["metrics"] != 1 || withMetrics.lastType != "metrics" {
		t.Errorf("demo --json --metrics: %d metrics lines, last %q; want the instruments last, as JSON", withMetrics.types["metrics"], withMetrics.lastType)
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

// TestTextRendererStreamsRows: a timeline row is written the moment it is
// emitted (demo --real-time shows each attempt as it happens), not held
// back for alignment with the rows after it.
func TestTextRendererStreamsRows(t *testing.T) {
	var out bytes.Buffer
	s := newStream(textRenderer{w: &out})
	s.emit(stepHeader{Step: 1, Title: "t", Guidance: "g"})
	for i, a := range []interceptor.Attempt{
		{Method: "/google.iam.v1.IAMPolicy/GetIamPolicy", N: 1, Err: status.Error(codes.Unavailable, "down"),
			Class: iamcodes.Transient, Reason: interceptor.Retry, Wait: 1500 * time.Millisecond},
		{Method: policy.UpdateMethod, N: 2, Err: status.Error(codes.DeadlineExceeded, "slow"),
			Class: iamcodes.Transient, Reason: interceptor.DeadlineReached},
	} {
		before := out.Len()
		s.emit(failedAttempt(1, time.Duration(i)*time.Second, "", a))
		row := out.String()[before:]
		if !strings.HasSuffix(row, "\n") || strings.Count(row, "\n") != 1 {
			t.Fatalf("emit wrote %q, want the whole row at once", row)
		}
		if !strings.Contains(row, fmt.Sprintf(" %d  ", a.N)) {
			t.Errorf("row %q lacks its attempt number", row)
		}
	}
	if err := s.err(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	header, first, second := lines[2], lines[3], lines[4]
	// Fixed widths: the columns line up without a look at the other rows.
	for _, col := range []string{"code", "class", "decision"} {
		i := strings.Index(header, col)
		if i < 0 || first[i-1] != ' ' || second[i-1] != ' ' || first[i] == ' ' || second[i] == ' ' {
			t.Errorf("column %q does not line up:\n%s\n%s\n%s", col, header, first, second)
		}
	}
}
