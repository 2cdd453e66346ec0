package iamtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// get calls google.iam.v1.IAMPolicy/GetIamPolicy and returns its code.
func (f *fixture) get(t *testing.T) codes.Code {
	t.Helper()
	_, err := f.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	return status.Code(err)
}

func TestFailNextScripts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.FailNext(MethodGetIamPolicy, 2, codes.Unavailable)
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.Internal)
	f.srv.FailNext(MethodSetIamPolicy, 0, codes.Internal) // nothing
	var got []codes.Code
	for range 4 {
		got = append(got, f.get(t))
	}
	if fmt.Sprint(got) != "[Unavailable Unavailable Internal OK]" {
		t.Fatalf("codes %v", got)
	}

	// A named method's script comes before AnyMethod's, which hits every method.
	f.srv.FailNext(AnyMethod, 2, codes.DeadlineExceeded)
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.NotFound)
	got = got[:0]
	for range 2 {
		got = append(got, f.get(t))
	}
	_, err := f.admin.GetRole(context.Background(), &adminpb.GetRoleRequest{Name: "roles/viewer"})
	got = append(got, status.Code(err), f.get(t))
	if fmt.Sprint(got) != "[NotFound DeadlineExceeded DeadlineExceeded OK]" {
		t.Fatalf("codes %v", got)
	}
	// Injected errors say so, and are logged as injected.
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = f.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, injectedPrefix) {
		t.Fatalf("message %q", msg)
	}
	calls := f.srv.Calls()
	if last := calls[len(calls)-1]; !last.Injected || last.Code != codes.Unavailable {
		t.Fatalf("last call %+v", last)
	}
	// An injected failure runs no handler: nothing is written.
	f.srv.FailNext(MethodSetIamPolicy, 1, codes.Internal)
	_, err = f.policy.SetIamPolicy(context.Background(), &iampb.SetIamPolicyRequest{Resource: "projects/f",
		Policy: &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}})
	wantCode(t, err, codes.Internal, "")
	if len(f.srv.Policy("projects/f").Bindings) != 0 {
		t.Fatal("a failed-before-handler write was applied")
	}
}

func TestFailureRateDeterministicUnderSeed(t *testing.T) {
	t.Parallel()
	run := func(seed int64) []codes.Code {
		f := newFixture(t, WithSeed(seed))
		f.srv.SetFailureRate(MethodGetIamPolicy, 0.3, codes.Unavailable, codes.Internal)
		out := make([]codes.Code, 200)
		for i := range out {
			out[i] = f.get(t)
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the same seed gave different faults")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("different seeds gave the same faults")
	}
	count := map[codes.Code]int{}
	for _, code := range a {
		count[code]++
	}
	if len(count) != 3 || count[codes.Unavailable]+count[codes.Internal] < 30 || count[codes.Unavailable]+count[codes.Internal] > 90 {
		t.Fatalf("codes drawn %v for rate 0.3 of 200", count)
	}

	// Reseeding restarts the sequence; rate 0 removes; the default code is UNAVAILABLE.
	f := newFixture(t)
	f.srv.SetSeed(7)
	f.srv.SetFailureRate(AnyMethod, 0.3, codes.Unavailable, codes.Internal)
	for i := range 50 {
		if got := f.get(t); got != a[i] {
			t.Fatalf("after SetSeed(7), call %d: %v, want %v", i, got, a[i])
		}
	}
	f.srv.SetFailureRate(AnyMethod, 0)
	f.srv.SetFailureRate(MethodGetIamPolicy, 1)
	if got := f.get(t); got != codes.Unavailable {
		t.Fatalf("rate 1 without codes: %v", got)
	}
	f.srv.SetFailureRate(MethodGetIamPolicy, 0)
	if got := f.get(t); got != codes.OK {
		t.Fatalf("rate removed: %v", got)
	}
}

func TestLostAnswerCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.srv.LoseNextAnswers(MethodSetIamPolicy, 1)
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/l",
		Policy: &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}})
	wantCode(t, err, codes.Unavailable, "")
	if len(f.srv.Policy("projects/l").Bindings) != 1 {
		t.Fatal("the lost write was not committed")
	}
	if c := f.srv.Calls()[0]; !c.Injected || c.Code != codes.Unavailable {
		t.Fatalf("logged %+v", c)
	}

	// AnyMethod loses answers of writes only.
	f.srv.LoseNextAnswers(AnyMethod, 1)
	if got := f.get(t); got != codes.OK {
		t.Fatalf("a read lost its answer: %v", got)
	}
	_, err = f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "lost-robot"})
	wantCode(t, err, codes.Unavailable, "")
	if f.srv.ServiceAccount("lost-robot@p.iam.gserviceaccount.com") == nil {
		t.Fatal("the lost create was not committed")
	}
	// Retrying the create now says ALREADY_EXISTS, as IAM would.
	_, err = f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "lost-robot"})
	wantCode(t, err, codes.AlreadyExists, "")

	// A rate of 1 loses every answer, and a retried key creation mints twice.
	f.srv.SetLostAnswerRate(MethodCreateServiceAccountKey, 1)
	for range 2 {
		_, err = f.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/-/serviceAccounts/lost-robot@p.iam.gserviceaccount.com"})
		wantCode(t, err, codes.Unavailable, "")
	}
	if n := len(f.srv.ServiceAccountKeys("lost-robot@p.iam.gserviceaccount.com")); n != 2 {
		t.Fatalf("%d keys minted", n)
	}
	// A failed handler has no answer to lose.
	f.srv.SetLostAnswerRate(AnyMethod, 1)
	_, err = f.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: "projects/p/serviceAccounts/ghost@p.iam.gserviceaccount.com"})
	wantCode(t, err, codes.NotFound, "")
	f.srv.SetLostAnswerRate(AnyMethod, 0)
	f.srv.SetLostAnswerRate(MethodCreateServiceAccountKey, 0)
	if _, err = f.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/-/serviceAccounts/lost-robot@p.iam.gserviceaccount.com"}); err != nil {
		t.Fatal(err)
	}
}

func TestLatencyThroughInjectedSleep(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var slept []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return nil
	}
	var sleepMu sync.Mutex
	current := sleep
	f := newFixture(t, WithClock(testClock{sleep: func(ctx context.Context, d time.Duration) error {
		sleepMu.Lock()
		fn := current
		sleepMu.Unlock()
		return fn(ctx, d)
	}}))
	f.srv.SetLatency(AnyMethod, time.Second)
	f.srv.SetLatency(MethodGetIamPolicy, 3*time.Second)
	f.get(t)
	_, _ = f.admin.GetRole(context.Background(), &adminpb.GetRoleRequest{Name: "roles/viewer"})
	f.srv.SetLatency(MethodGetIamPolicy, 0)
	f.get(t)
	if fmt.Sprint(slept) != "[3s 1s 1s]" {
		t.Fatalf("slept %v", slept)
	}

	// A call whose context ends during the wait answers the context's code.
	entered := make(chan struct{})
	sleepMu.Lock()
	current = func(ctx context.Context, d time.Duration) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}
	sleepMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	_, err := f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	wantCode(t, err, codes.Canceled, "")
	waitFor(t, func() bool { return f.srv.CountCalls(AnyMethod) == 4 })
	if c := f.srv.Calls()[3]; c.Code != codes.Canceled || c.Injected {
		t.Fatalf("logged %+v", c)
	}
}

func TestRetryInfoDetail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.SetRetryInfo(1500 * time.Millisecond)
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.Unavailable)
	_, err := f.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	var found bool
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			found = ri.GetRetryDelay().AsDuration() == 1500*time.Millisecond
		}
	}
	if !found {
		t.Fatalf("no RetryInfo of 1.5s in %v", status.Convert(err).Details())
	}
	f.srv.SetRetryInfo(0)
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = f.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	if d := status.Convert(err).Details(); len(d) != 0 {
		t.Fatalf("details after SetRetryInfo(0): %v", d)
	}
}

func TestResetFaultsAndPanics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.FailNext(AnyMethod, 5, codes.Internal)
	f.srv.SetFailureRate(AnyMethod, 1)
	f.srv.SetOutage(AnyMethod, codes.Unavailable)
	f.srv.SetLatency(AnyMethod, time.Hour)
	f.srv.LoseNextAnswers(AnyMethod, 1)
	f.srv.ResetFaults()
	if got := f.get(t); got != codes.OK {
		t.Fatalf("after ResetFaults: %v", got)
	}
	for name, fn := range map[string]func(){
		"FailNext OK":       func() { f.srv.FailNext(AnyMethod, 1, codes.OK) },
		"rate above 1":      func() { f.srv.SetFailureRate(AnyMethod, 1.5) },
		"lost rate below 0": func() { f.srv.SetLostAnswerRate(AnyMethod, -0.1) },
		"rate with code OK": func() { f.srv.SetFailureRate(AnyMethod, 0.5, codes.OK) },
		"outage OK":         func() { f.srv.SetOutage(AnyMethod, codes.OK) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestIsWrite(t *testing.T) {
	t.Parallel()
	for m, want := range map[Method]bool{
		MethodGetIamPolicy: false, MethodTestIamPermissions: false, MethodListRoles: false,
		MethodSetIamPolicy: true, MethodCreateServiceAccount: true, MethodDeleteServiceAccount: true,
		MethodCreateServiceAccountKey: true, MethodProjectsSetIamPolicy: true, "/google.iam.admin.v1.IAM/LintPolicy": false,
	} {
		if isWrite(m) != want {
			t.Errorf("isWrite(%s) = %v", m, !want)
		}
	}
}

// waitFor polls cond (the server logs a call just after the client has its
// answer).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 2000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not met in 2s")
}

// TestMethodOutageAnswersBeforeLatency pins SetOutage: the named method
// fails at once (no latency), others still answer, and clearing it ends it.
func TestMethodOutageAnswersBeforeLatency(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.srv.SetLatency(AnyMethod, time.Hour)
	f.srv.SetOutage(MethodGetIamPolicy, codes.Unavailable)
	t0 := f.clock.Now()
	if got := f.get(t); got != codes.Unavailable {
		t.Fatalf("during the outage: %v, want UNAVAILABLE", got)
	}
	if d := f.clock.Now().Sub(t0); d != 0 {
		t.Fatalf("the outage answered after %v of latency, want at once", d)
	}
	f.srv.SetLatency(AnyMethod, 0)
	f.srv.ClearOutage(MethodGetIamPolicy)
	if got := f.get(t); got != codes.OK {
		t.Fatalf("after ClearOutage: %v, want OK", got)
	}
	if c := f.srv.Calls(); !c[0].Injected || c[0].Resource != "projects/f" {
		t.Fatalf("outage call logged as %+v, want injected, resource projects/f", c[0])
	}
}
