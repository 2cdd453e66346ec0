package iamtest_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// codesOf returns the codes of the logged calls of m, in order.
func codesOf(srv *iamtest.Server, m iamtest.Method) []codes.Code {
	var out []codes.Code
	for _, c := range srv.Calls() {
		if c.Method == m {
			out = append(out, c.Code)
		}
	}
	return out
}

func TestFailNextFailsTheNextCallsOfAMethod(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := c.createAccount(t, "p", "robot-one")

	srv.FailNext(iamtest.MethodGetServiceAccount, 2, codes.Unavailable)
	srv.FailNext(iamtest.MethodGetServiceAccount, 1, codes.Internal) // queues behind
	srv.FailNext(iamtest.MethodGetIamPolicy, 0, codes.Internal)      // nothing
	for _, want := range []codes.Code{codes.Unavailable, codes.Unavailable, codes.Internal, codes.OK} {
		if _, err := c.getAccount(sa.Email); status.Code(err) != want {
			t.Fatalf("GetServiceAccount: %v, want %v", err, want)
		}
	}
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatalf("other methods must be untouched: %v", err)
	}

	srv.FailNext(iamtest.AnyMethod, 1, codes.DeadlineExceeded)
	if _, err := c.getAccount(sa.Email); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("AnyMethod script: %v", err)
	}
	if err := c.grant("projects/p", "roles/editor", "user:a@example.com"); err != nil {
		t.Fatalf("AnyMethod script used once: %v", err)
	}
}

func TestFailNextChangesNothing(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.FailNext(iamtest.MethodSetIamPolicy, 1, codes.Internal)
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Internal {
		t.Fatalf("grant: %v, want INTERNAL", err)
	}
	if m := c.members(t, "projects/p", "roles/viewer"); m != nil {
		t.Fatalf("a failed write changed the policy: %v", m)
	}
}

func TestSetFailureRateIsSeeded(t *testing.T) {
	t.Parallel()
	run := func(seed int64) []codes.Code {
		srv := iamtest.NewServer(t, iamtest.WithSeed(seed))
		c := newClients(t, srv)
		srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.5, codes.Unavailable, codes.Internal)
		for range 40 {
			_, _ = c.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
		}
		return codesOf(srv, iamtest.MethodGetIamPolicy)
	}
	a, b := run(7), run(7)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different faults:\n%v\n%v", a, b)
	}
	n := map[codes.Code]int{}
	for _, code := range a {
		n[code]++
	}
	if n[codes.OK] == 0 || n[codes.Unavailable] == 0 || n[codes.Internal] == 0 || len(n) != 3 {
		t.Fatalf("codes over 40 calls at rate 0.5: %v", n)
	}
}

func TestSetFailureRateOneAndZero(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetFailureRate(iamtest.AnyMethod, 1) // UNAVAILABLE by default
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Unavailable {
		t.Fatalf("rate 1: %v", err)
	}
	srv.SetFailureRate(iamtest.AnyMethod, 0)
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatalf("rate 0: %v", err)
	}
}

func TestLoseNextAnswersCommitsThenFails(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Unavailable {
		t.Fatalf("lost answer: %v, want UNAVAILABLE", err)
	}
	if m := c.members(t, "projects/p", "roles/viewer"); !slices.Equal(m, []string{"user:a@example.com"}) {
		t.Fatalf("the write whose answer was lost did not commit: %v", m)
	}
	sa := c.createAccount(t, "p", "robot-one")
	srv.LoseNextAnswers(iamtest.AnyMethod, 1) // counts writes only
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatalf("a read under AnyMethod lost answers: %v", err)
	}
	if err := c.grant("projects/p", "roles/editor", "user:a@example.com"); status.Code(err) != codes.Unavailable {
		t.Fatalf("a write under AnyMethod lost answers: %v, want UNAVAILABLE", err)
	}
}

func TestSetLostAnswerRateOnWrites(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetLostAnswerRate(iamtest.AnyMethod, 1)
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Unavailable {
		t.Fatalf("write at lost-answer rate 1: %v", err)
	}
	if m := c.members(t, "projects/p", "roles/viewer"); len(m) != 1 {
		t.Fatalf("write not committed, or read lost: %v", m)
	}
	srv.SetLostAnswerRate(iamtest.AnyMethod, 0)
	if err := c.grant("projects/p", "roles/editor", "user:a@example.com"); err != nil {
		t.Fatalf("rate 0: %v", err)
	}
}

func TestSetOutageUntilCleared(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := c.createAccount(t, "p", "robot-one")

	srv.SetOutage(iamtest.MethodGetServiceAccount, codes.Unavailable)
	for range 3 {
		if _, err := c.getAccount(sa.Email); status.Code(err) != codes.Unavailable {
			t.Fatalf("method outage: %v", err)
		}
	}
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatalf("a method outage took down another method: %v", err)
	}
	srv.SetOutage(iamtest.AnyMethod, codes.Internal)
	if err := c.grant("projects/p", "roles/viewer", "user:b@example.com"); status.Code(err) != codes.Internal {
		t.Fatalf("outage of all: %v", err)
	}
	if _, err := c.getAccount(sa.Email); status.Code(err) != codes.Unavailable {
		t.Fatalf("the named method's outage must win: %v", err)
	}
	srv.ClearOutage(iamtest.AnyMethod)
	srv.ClearOutage(iamtest.MethodGetServiceAccount)
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatalf("after ClearOutage: %v", err)
	}
}

func TestSetLatencyWaitsOnTheClock(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	srv.SetLatency(iamtest.AnyMethod, time.Second)
	srv.SetLatency(iamtest.MethodSetIamPolicy, time.Minute)
	start := clock.Now()
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatal(err)
	}
	if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Second, time.Minute}) {
		t.Fatalf("slept %v, want [1s 1m0s]", got)
	}
	calls := srv.Calls()
	if len(calls) != 2 || !calls[0].Time.Equal(start) || !calls[1].Time.Equal(start.Add(time.Second)) {
		t.Fatalf("call times on the fake's clock: %v", calls)
	}
	srv.SetLatency(iamtest.AnyMethod, 0)
	srv.SetLatency(iamtest.MethodSetIamPolicy, 0)
	if err := c.grant("projects/p", "roles/viewer", "user:b@example.com"); err != nil {
		t.Fatal(err)
	}
	if got := len(clock.Sleeps()); got != 2 {
		t.Fatalf("latency 0 still slept: %d sleeps", got)
	}
}

// TestSetLatencyOutlastsTheCallerDeadline uses the wall clock: a call whose
// deadline is shorter than the latency ends with DEADLINE_EXCEEDED at its
// deadline (a short real wait, generous bound).
func TestSetLatencyOutlastsTheCallerDeadline(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetLatency(iamtest.MethodGetIamPolicy, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("GetIamPolicy: %v, want DEADLINE_EXCEEDED", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the call outlived its deadline: %v", d)
	}
}

func TestSetRetryInfoOnInjectedErrors(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetRetryInfo(3 * time.Second)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	srv.SetOutage(iamtest.MethodSetIamPolicy, codes.Unavailable)
	for _, m := range []string{"script", "outage"} {
		err := c.grant("projects/p", "roles/viewer", "user:a@example.com")
		if got := retryDelay(err); got != 3*time.Second {
			t.Fatalf("%s: RetryInfo delay %v in %v, want 3s", m, got, err)
		}
	}
	srv.ClearOutage(iamtest.MethodSetIamPolicy)
	srv.SetRetryInfo(0)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Unavailable || retryDelay(err) != 0 {
		t.Fatalf("after SetRetryInfo(0): %v", err)
	}
}

// retryDelay returns the RetryInfo delay err carries, or 0.
func retryDelay(err error) time.Duration {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

func TestSetPropagationReadsHidesNewAccounts(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetPropagationReads(2)
	sa := c.createAccount(t, "p", "robot-one")
	for _, want := range []codes.Code{codes.NotFound, codes.NotFound, codes.OK} {
		if _, err := c.getAccount(sa.Email); status.Code(err) != want {
			t.Fatalf("GetServiceAccount: %v, want %v", err, want)
		}
	}
}

func TestSetPropagationDelayHidesNewAccountsForAWhile(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	srv.SetPropagationDelay(time.Minute)
	sa := c.createAccount(t, "p", "robot-one")
	if _, err := c.getAccount(sa.Email); status.Code(err) != codes.NotFound {
		t.Fatalf("fresh account: %v, want NOT_FOUND", err)
	}
	_, err := c.admin.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: sa.Name})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("fresh account's policy: %v, want NOT_FOUND", err)
	}
	clock.Advance(time.Minute)
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatalf("after the delay: %v", err)
	}
}

func TestConcurrentWriteNextMovesTheEtag(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 1)
	err := c.grant("projects/p", "roles/viewer", "user:a@example.com")
	if status.Code(err) != codes.Aborted {
		t.Fatalf("write with the etag read before another writer: %v, want ABORTED", err)
	}
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatalf("a rerun of the read-modify-write: %v", err)
	}

	srv.SetStaleEtagCode(codes.FailedPrecondition)
	srv.ConcurrentWriteNext(iamtest.AnyMethod, 1)
	if err := c.grant("projects/p", "roles/editor", "user:a@example.com"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("stale etag code: %v, want FAILED_PRECONDITION", err)
	}
	srv.ResetFaults()
	srv.ConcurrentWriteNext(iamtest.AnyMethod, 1)
	if err := c.grant("projects/p", "roles/editor", "user:a@example.com"); status.Code(err) != codes.Aborted {
		t.Fatalf("ResetFaults must restore ABORTED: %v", err)
	}
}

func TestCallsLogMethodResourceCodeAndInjected(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := c.createAccount(t, "p", "robot-one")
	srv.FailNext(iamtest.MethodGetServiceAccount, 1, codes.Unavailable)
	_, _ = c.getAccount(sa.Email)
	_ = c.grant("projects/p", "roles/viewer", "user:a@example.com")
	_, _ = c.admin.ListRoles(context.Background(), &adminpb.ListRolesRequest{}, noRetry)

	want := []iamtest.Call{
		{Method: iamtest.MethodCreateServiceAccount, Resource: "projects/p", Code: codes.OK, Applied: true},
		{Method: iamtest.MethodGetServiceAccount, Resource: "projects/-/serviceAccounts/" + sa.Email, Code: codes.Unavailable, Injected: true},
		{Method: iamtest.MethodGetIamPolicy, Resource: "projects/p", Code: codes.OK, Applied: true},
		{Method: iamtest.MethodSetIamPolicy, Resource: "projects/p", Code: codes.OK, Applied: true},
		{Method: iamtest.MethodListRoles, Resource: "", Code: codes.OK, Applied: true},
	}
	got := srv.Calls()
	for i := range got {
		got[i].Time = time.Time{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("calls:\n got %v\nwant %v", got, want)
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 5 {
		t.Fatalf("CountCalls(AnyMethod) = %d", n)
	}
	if n := srv.CountCalls(iamtest.MethodGetServiceAccount); n != 1 {
		t.Fatalf("CountCalls(GetServiceAccount) = %d", n)
	}
	srv.ResetCalls()
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("%d calls after ResetCalls", n)
	}
}

// TestControlsRefuseBadInput checks that each control panics with a message
// naming the control and the value.
func TestControlsRefuseBadInput(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	for _, tc := range []struct {
		call func()
		want string
	}{
		{func() { srv.FailNext(iamtest.MethodGetRole, 1, codes.OK) }, "FailNext: code OK"},
		{func() { srv.FailNext(iamtest.MethodGetRole, -1, codes.Internal) }, "FailNext: count -1"},
		{func() { srv.FailNext("GetRole", 1, codes.Internal) }, `FailNext: method "GetRole"`},
		{func() { srv.FailNext(iamtest.MethodGetRole, 1, codes.Code(99)) }, "FailNext: code 99"},
		{func() { srv.SetFailureRate(iamtest.AnyMethod, 1.5) }, "SetFailureRate: rate 1.5"},
		{func() { srv.SetFailureRate(iamtest.AnyMethod, 0.5, codes.OK) }, "SetFailureRate: code OK"},
		{func() { srv.LoseNextAnswers(iamtest.AnyMethod, -2) }, "LoseNextAnswers: count -2"},
		{func() { srv.SetLostAnswerRate(iamtest.AnyMethod, -0.1) }, "SetLostAnswerRate: rate -0.1"},
		{func() { srv.SetLatency(iamtest.AnyMethod, -time.Second) }, "SetLatency: duration -1s"},
		{func() { srv.SetRetryInfo(-time.Second) }, "SetRetryInfo: duration -1s"},
		{func() { srv.SetOutage(iamtest.AnyMethod, codes.OK) }, "SetOutage: code OK"},
		{func() { srv.ClearOutage("x") }, `ClearOutage: method "x"`},
		{func() { srv.ConcurrentWriteNext(iamtest.MethodGetIamPolicy, 1) }, "ConcurrentWriteNext: method \"/google.iam.v1.IAMPolicy/GetIamPolicy\" is not a SetIamPolicy method"},
		{func() { srv.SetStaleEtagCode(codes.OK) }, "SetStaleEtagCode: code OK"},
		{func() { srv.SetPropagationDelay(-time.Second) }, "SetPropagationDelay: duration -1s"},
		{func() { srv.SetPropagationReads(-1) }, "SetPropagationReads: count -1"},
		{func() { srv.CountCalls("") }, `CountCalls: method ""`},
	} {
		msg := panicMessage(tc.call)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("panic %q does not say %q", msg, tc.want)
		}
	}
}

// TestControlsAreSafeForConcurrentUse changes every control while calls run
// (run with -race).
func TestControlsAreSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 20 {
				_ = c.grant("projects/p", "roles/viewer", "user:a@example.com")
				_, _ = c.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/q"}, noRetry)
			}
		})
		wg.Go(func() {
			for j := range 20 {
				srv.FailNext(iamtest.AnyMethod, 1, codes.Unavailable)
				srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.1)
				srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
				srv.SetLostAnswerRate(iamtest.AnyMethod, 0.1)
				srv.SetOutage(iamtest.MethodTestIamPermissions, codes.Unavailable)
				srv.ClearOutage(iamtest.MethodTestIamPermissions)
				srv.SetRetryInfo(time.Duration(j) * time.Millisecond)
				srv.ConcurrentWriteNext(iamtest.AnyMethod, 1)
				srv.SetPropagationReads(i)
				srv.SetSeed(int64(j))
				_ = srv.Calls()
				_ = srv.CountCalls(iamtest.AnyMethod)
				if j%5 == 0 {
					srv.ResetFaults()
					srv.ResetCalls()
				}
			}
		})
	}
	wg.Wait()
	srv.ResetFaults()
	if err := c.grant("projects/p", "roles/editor", "user:b@example.com"); err != nil {
		t.Fatalf("after ResetFaults: %v", err)
	}
}
