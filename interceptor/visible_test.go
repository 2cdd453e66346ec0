package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// good is a read that succeeds in a readScript.
var good error

// readScript is a read for WaitVisible: read i (from 1) fails with errs[i-1]
// when that is not nil, and succeeds with the value i otherwise; after errs
// every read succeeds.
type readScript struct {
	errs  []error
	reads int
	ctxs  []context.Context
}

func (s *readScript) read(ctx context.Context) (int, error) {
	s.reads++
	s.ctxs = append(s.ctxs, ctx)
	if i := s.reads - 1; i < len(s.errs) && s.errs[i] != nil {
		return 0, s.errs[i]
	}
	return s.reads, nil
}

// notFound is a distinct NOT_FOUND per read, so tests can tell which one came back.
func notFound(i int) error {
	return status.Errorf(grpccodes.NotFound, "Service account robot@p.iam.gserviceaccount.com does not exist (read %d).", i)
}

// denied is a PERMISSION_DENIED with an ErrorInfo of reason, or none when
// reason is "".
func denied(reason string) error {
	st := status.New(grpccodes.PermissionDenied, "Permission iam.serviceAccounts.get is required to perform this operation on service account robot.")
	if reason == "" {
		return st.Err()
	}
	st, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "iam.googleapis.com"})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func waitVisible(h *harness, s *readScript, opts ...interceptor.VisibleOption) (int, error) {
	return interceptor.WaitVisible(context.Background(), h.r, "get robot", s.read, opts...)
}

func TestWaitVisibleReturnsAfterExactlyNConsecutiveGoodReads(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t)
			s := &readScript{errs: []error{notFound(1), notFound(2)}}
			var opts []interceptor.VisibleOption
			if n != interceptor.DefaultConsecutiveReads {
				opts = append(opts, interceptor.ConsecutiveReads(n))
			}
			v, err := waitVisible(h, s, opts...)
			if err != nil || s.reads != 2+n || v != 2+n {
				t.Fatalf("got %d, %v after %d reads; want the value of read %d, nil", v, err, s.reads, 2+n)
			}
			// Failed reads follow the Backoff (1.5 s, 2.5 s with r = 0.5);
			// good reads are spaced by its first step (1.5 s).
			want := secs(1.5, 2.5)
			for range n - 1 {
				want = append(want, 1500*time.Millisecond)
			}
			if got := h.clock.Sleeps(); !slices.Equal(got, want) {
				t.Fatalf("waits %v, want %v", got, want)
			}
		})
	}
}

func TestWaitVisibleDefaultIsThreeReads(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &readScript{}
	if v, err := waitVisible(h, s); err != nil || s.reads != 3 || v != 3 {
		t.Fatalf("got %d, %v after %d reads; want 3 good reads", v, err, s.reads)
	}
}

func TestWaitVisibleBadReadRestartsTheCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &readScript{errs: []error{good, good, notFound(3), good, notFound(5)}}
	v, err := waitVisible(h, s)
	if err != nil || s.reads != 8 || v != 8 {
		t.Fatalf("got %d, %v after %d reads; want 8 reads (good, good, NOT_FOUND, good, NOT_FOUND, 3 good)", v, err, s.reads)
	}
	// Confirming waits at the first step; the failed reads' waits grow with
	// the failed reads alone (steps 0 and 1).
	if got, want := h.clock.Sleeps(), secs(1.5, 1.5, 1.5, 1.5, 2.5, 1.5, 1.5); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestWaitVisibleRetriesTransientAfterAGoodRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &readScript{errs: []error{good, status.Error(grpccodes.Unavailable, "try again")}}
	if v, err := waitVisible(h, s); err != nil || s.reads != 5 || v != 5 {
		t.Fatalf("got %d, %v after %d reads; want 5", v, err, s.reads)
	}
}

func TestWaitVisibleGivesUpAtTheDeadlineWithTheLastError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithDeadline(10*time.Second))
	var errs []error
	for i := range 20 {
		errs = append(errs, notFound(i+1))
	}
	s := &readScript{errs: errs}
	_, err := waitVisible(h, s)
	// Waits 1.5 + 2.5 + 4.5 = 8.5 s; the next, 8.5 s, would end past 10 s.
	if s.reads != 4 || err != errs[3] {
		t.Fatalf("after %d reads: %v; want read 4's NOT_FOUND, unchanged", s.reads, err)
	}
	if last := h.attempts[len(h.attempts)-1]; last.Reason != interceptor.DeadlineReached || last.Retrying {
		t.Fatalf("last attempt %+v; want DeadlineReached", last)
	}
}

func TestWaitVisibleUnconfirmedAtTheDeadline(t *testing.T) {
	t.Parallel()
	// NOT_FOUND at 0 s, a good read at 1.5 s; confirming it would end at
	// 3 s, past the deadline.
	h := newHarness(t, interceptor.WithDeadline(2*time.Second))
	s := &readScript{errs: []error{notFound(1), good}}
	v, err := waitVisible(h, s)
	var ue *interceptor.UnconfirmedError
	if !errors.As(err, &ue) || ue.Reads != 1 || ue.Want != 3 || ue.Name != "get robot" || v != 2 || s.reads != 2 {
		t.Fatalf("got %d, %v after %d reads; want read 2's value and an UnconfirmedError of 1 of 3", v, err, s.reads)
	}
}

func TestWaitVisiblePermissionDenied(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		errs  []error
		opts  []interceptor.VisibleOption
		reads int  // reads made
		ok    bool // the wait succeeds
	}{
		{"IAM_PERMISSION_DENIED before the first good read", []error{notFound(1), denied("IAM_PERMISSION_DENIED"), denied("IAM_PERMISSION_DENIED")}, nil, 6, true},
		{"no ErrorInfo before the first good read", []error{denied(""), denied("")}, nil, 5, true},
		{"SERVICE_DISABLED", []error{denied("SERVICE_DISABLED")}, nil, 1, false},
		{"ACCESS_TOKEN_SCOPE_INSUFFICIENT", []error{notFound(1), denied("ACCESS_TOKEN_SCOPE_INSUFFICIENT")}, nil, 2, false},
		{"after a good read", []error{good, denied("IAM_PERMISSION_DENIED")}, nil, 2, false},
		{"after a good read and a NOT_FOUND", []error{good, notFound(2), denied("")}, nil, 3, false},
		{"over the default cap of 5", slices.Repeat([]error{denied("IAM_PERMISSION_DENIED")}, 6), nil, 6, false},
		{"within a cap of 2", slices.Repeat([]error{denied("")}, 2), []interceptor.VisibleOption{interceptor.PermissionDeniedRetries(2)}, 5, true},
		{"over a cap of 2", slices.Repeat([]error{denied("")}, 3), []interceptor.VisibleOption{interceptor.PermissionDeniedRetries(2)}, 3, false},
		{"a cap of 0", []error{denied("")}, []interceptor.VisibleOption{interceptor.PermissionDeniedRetries(0)}, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			s := &readScript{errs: c.errs}
			_, err := waitVisible(h, s, c.opts...)
			if s.reads != c.reads || (err == nil) != c.ok {
				t.Fatalf("%d reads, %v; want %d reads, success %v", s.reads, err, c.reads, c.ok)
			}
			if !c.ok {
				if err != c.errs[c.reads-1] {
					t.Fatalf("got %v; want the last read's PERMISSION_DENIED, unchanged", err)
				}
				if a := h.attempts[len(h.attempts)-1]; a.Reason != interceptor.NotRetryable || a.Class != codes.Permanent {
					t.Fatalf("last attempt %+v; want Permanent, not retryable", a)
				}
			}
		})
	}
}

// A REST error (*googleapi.Error) is judged by its HTTP status and the
// ErrorInfo in its JSON details, as a gRPC status is.
func TestWaitVisibleRESTErrors(t *testing.T) {
	t.Parallel()
	restDenied := func(reason string) error {
		e := &googleapi.Error{Code: 403, Message: "The caller does not have permission"}
		if reason != "" {
			e.Details = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}}
		}
		return e
	}
	// As googleapi.CheckResponse builds it: the JSON body, and its details parsed.
	bodyDenied := func(reason string) error {
		e := restDenied(reason).(*googleapi.Error)
		e.Body = `{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"` + reason + `","domain":"googleapis.com"}]}}`
		return e
	}
	h := newHarness(t)
	s := &readScript{errs: []error{&googleapi.Error{Code: 404}, restDenied("IAM_PERMISSION_DENIED"), restDenied("")}}
	if _, err := waitVisible(h, s); err != nil || s.reads != 6 {
		t.Fatalf("%d reads, %v; want 404 and 403s retried, then 3 good reads", s.reads, err)
	}
	for _, e := range []error{restDenied("SERVICE_DISABLED"), bodyDenied("SERVICE_DISABLED")} {
		h = newHarness(t)
		s = &readScript{errs: []error{e}}
		if _, err := waitVisible(h, s); err != e || s.reads != 1 {
			t.Fatalf("%d reads, %v; want SERVICE_DISABLED returned at once", s.reads, err)
		}
	}
	h = newHarness(t)
	s = &readScript{errs: []error{bodyDenied("IAM_PERMISSION_DENIED")}}
	if _, err := waitVisible(h, s); err != nil || s.reads != 4 {
		t.Fatalf("%d reads, %v; want IAM_PERMISSION_DENIED in the body retried", s.reads, err)
	}
}

// NOT_FOUND is retried whatever WithRetryNotFound and the classifier say:
// it is what the wait is for.
func TestWaitVisibleRetriesNotFoundWithoutTheOptIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithClassifier(func(string, error) codes.Class { return codes.Permanent }))
	s := &readScript{errs: []error{notFound(1)}}
	if _, err := waitVisible(h, s); err != nil || s.reads != 4 {
		t.Fatalf("%d reads, %v; want NOT_FOUND retried", s.reads, err)
	}
}

func TestWaitVisibleObserved(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &readScript{errs: []error{notFound(1)}}
	if _, err := waitVisible(h, s); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		n      int
		class  codes.Class
		reason interceptor.Reason
		wait   time.Duration
		unconf bool
	}
	var got []seen
	for _, a := range h.attempts {
		var ue *interceptor.UnconfirmedError
		if a.Method != "get robot" {
			t.Fatalf("method %q", a.Method)
		}
		got = append(got, seen{a.N, a.Class, a.Reason, a.Wait, errors.As(a.Err, &ue)})
	}
	// The good reads short of the count are no failures: Confirming, Err
	// nil (no UnconfirmedError), the zero Class.
	want := []seen{
		{1, codes.Propagation, interceptor.Retry, 1500 * time.Millisecond, false},
		{2, codes.Permanent, interceptor.Confirming, 1500 * time.Millisecond, false},
		{3, codes.Permanent, interceptor.Confirming, 1500 * time.Millisecond, false},
		{4, codes.Permanent, interceptor.Succeeded, 0, false},
	}
	for _, a := range h.attempts[1:3] {
		if a.Err != nil || !a.Retrying {
			t.Fatalf("good read reported with Err %v, Retrying %v; want nil, true", a.Err, a.Retrying)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("observed %+v\nwant %+v", got, want)
	}
}

// The waits between good reads confirm, they retry no failure: they spend no
// retry budget.
func TestWaitVisibleConfirmingSpendsNoBudget(t *testing.T) {
	t.Parallel()
	// A budget that allows one retry: the NOT_FOUND's.
	h := newHarness(t, interceptor.WithRetryBudget(0, 0.001))
	s := &readScript{errs: []error{notFound(1)}}
	if _, err := waitVisible(h, s); err != nil || s.reads != 4 {
		t.Fatalf("%d reads, %v; want 4 reads", s.reads, err)
	}
	s = &readScript{errs: []error{notFound(1)}}
	if _, err := waitVisible(h, s); err == nil || s.reads != 1 {
		t.Fatalf("%d reads, %v; want the spent budget to refuse the second wait's NOT_FOUND", s.reads, err)
	}
}

func TestWaitVisibleContextEndsDuringAWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, interceptor.WithClock(cancelClock{cancel}))
	first := notFound(1)
	_, err := interceptor.WaitVisible(ctx, h.r, "get robot", func(context.Context) (int, error) {
		return 0, first
	})
	if status.Code(err) != grpccodes.Canceled || !errors.Is(err, first) {
		t.Fatalf("got %v; want CANCELED wrapping the last NOT_FOUND", err)
	}
}

// The reads are owned: an interceptor of the Retrier beneath passes their
// failures through, so each read reaches the server once.
func TestWaitVisibleReadsAreOwned(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	inner := &script{errs: []error{status.Error(grpccodes.Unavailable, "x"), notFound(2)}}
	_, err := interceptor.WaitVisible(context.Background(), h.r, "get robot", func(ctx context.Context) (int, error) {
		return 0, h.call(ctx, inner, getServiceAccount, nil)
	})
	if err != nil || inner.calls != 5 {
		t.Fatalf("%d calls, %v; want 5 (UNAVAILABLE and NOT_FOUND each reached the server once)", inner.calls, err)
	}
}

func TestWaitVisibleRefusesBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &readScript{}
	capped := newHarness(t, interceptor.WithMaxAttempts(2))
	cases := []struct {
		r    *interceptor.Retrier
		read func(context.Context) (int, error)
		opts []interceptor.VisibleOption
		want []string
	}{
		{h.r, s.read, []interceptor.VisibleOption{interceptor.ConsecutiveReads(0)}, []string{"ConsecutiveReads(0)"}},
		{h.r, s.read, []interceptor.VisibleOption{interceptor.ConsecutiveReads(-2), interceptor.PermissionDeniedRetries(-1)}, []string{"ConsecutiveReads(-2)", "PermissionDeniedRetries(-1)"}},
		{h.r, s.read, []interceptor.VisibleOption{nil}, []string{"option 1 of 1 is nil"}},
		{nil, s.read, nil, []string{"Retrier is nil"}},
		{h.r, nil, nil, []string{"read is nil"}},
		{capped.r, s.read, nil, []string{"3 consecutive good reads", "WithMaxAttempts(2)"}},
	}
	for _, c := range cases {
		_, err := interceptor.WaitVisible(context.Background(), c.r, "get robot", c.read, c.opts...)
		if err == nil {
			t.Fatalf("%v: no error", c.want)
		}
		for _, w := range append(c.want, "WaitVisible(get robot)") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
	}
	if s.reads != 0 {
		t.Fatalf("%d reads made for refused calls", s.reads)
	}
	if _, err := interceptor.WaitVisible(context.Background(), capped.r, "get robot", s.read, interceptor.ConsecutiveReads(2)); err != nil || s.reads != 2 {
		t.Fatalf("2 reads within WithMaxAttempts(2): %d reads, %v", s.reads, err)
	}
}

func TestWaitVisibleMetricsLikeDo(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	if _, err := waitVisible(h, &readScript{errs: []error{notFound(1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := waitVisible(h, &readScript{}, interceptor.ConsecutiveReads(1)); err != nil {
		t.Fatal(err)
	}
	ms := h.collect()
	method := map[string]string{"grpc.method": "other"}
	if n, ok := sum(t, ms, "iamretry.client.calls", method); !ok || n != 2 {
		t.Fatalf("calls %d (found %v), want 2", n, ok)
	}
	// The NOT_FOUND's retry is counted and its wait; the good reads' are not.
	if r := histogram[int64](t, ms, "iamretry.client.call.retries", method); r.Count != 1 || r.Sum != 1 {
		t.Fatalf("retries %+v, want one call with 1 retry (the good reads are none)", r)
	}
	if d := histogram[float64](t, ms, "iamretry.client.call.retry_delay", method); d.Count != 1 || d.Sum != 1.5 {
		t.Fatalf("retry_delay %+v, want one call that waited 1.5 s to retry", d)
	}
}

// TestWaitVisibleGoodReadsAreNoFailures: three good reads are reported as
// what they are on every outlet: observers see two Confirming reports with
// Err nil and no final report (nothing was retried), the log says
// "confirming" at Debug, the span gets iamretry.confirm events, and the
// metrics count one call that succeeded, with no retries.
func TestWaitVisibleGoodReadsAreNoFailures(t *testing.T) {
	t.Parallel()
	type entry struct {
		level  logging.Level
		msg    string
		reason any
	}
	var logged []entry
	l := logging.LoggerFunc(func(_ context.Context, lv logging.Level, msg string, fields ...any) {
		e := entry{level: lv, msg: msg}
		for i := 0; i+1 < len(fields); i += 2 {
			switch fields[i] {
			case "iamretry.reason":
				e.reason = fields[i+1]
			case "grpc.status", "error":
				t.Errorf("a good read logged %s=%v", fields[i], fields[i+1])
			}
		}
		logged = append(logged, e)
	})
	h := newHarnessOf(t, []interceptor.Option{interceptor.WithLogger(l)}, withMeter(), withSpans())
	s := &readScript{}
	var err error
	events := h.traced(func(ctx context.Context) {
		_, err = interceptor.WaitVisible(ctx, h.r, "get robot", s.read)
	})
	if err != nil || s.reads != 3 {
		t.Fatalf("%d reads, %v; want 3 good reads", s.reads, err)
	}
	if len(h.attempts) != 2 {
		t.Fatalf("observed %+v; want 2 Confirming reports", h.attempts)
	}
	for i, a := range h.attempts {
		if a.Reason != interceptor.Confirming || a.Err != nil || a.N != i+1 || !a.Retrying || a.Wait != 1500*time.Millisecond {
			t.Fatalf("report %d: %+v; want Confirming, Err nil, N %d, a 1.5 s wait", i, a, i+1)
		}
	}
	wantLog := []entry{
		{logging.LevelDebug, "iamretry: good read, confirming", "confirming"},
		{logging.LevelDebug, "iamretry: good read, confirming", "confirming"},
	}
	if !slices.Equal(logged, wantLog) {
		t.Fatalf("logged %+v\nwant %+v", logged, wantLog)
	}
	if len(events) != 2 {
		t.Fatalf("span events %+v; want 2 iamretry.confirm", events)
	}
	for i, e := range events {
		want := map[string]string{"iamretry.attempt": fmt.Sprint(i + 1), "iamretry.reason": "confirming", "iamretry.wait": "1.5"}
		if e.Name != "iamretry.confirm" || !sameKVs(e.Attributes, want) {
			t.Fatalf("span event %d: %s %v; want iamretry.confirm %v", i, e.Name, e.Attributes, want)
		}
	}
	ms := h.collect()
	method := map[string]string{"grpc.method": "other"}
	if n, ok := sum(t, ms, "iamretry.client.calls", method); !ok || n != 1 {
		t.Fatalf("calls %d (found %v); want 1 that succeeded", n, ok)
	}
	for _, name := range []string{"iamretry.client.call.retries", "iamretry.client.call.retry_delay", "iamretry.client.call.gave_up"} {
		if n := points(ms, name); n != 0 {
			t.Fatalf("%s has %d points; want none (no retry, no give-up)", name, n)
		}
	}
}

// cancelClock cancels the call's context when a wait starts.
type cancelClock struct{ cancel context.CancelFunc }

func (cancelClock) Now() time.Time { return time.Unix(0, 0) }

func (c cancelClock) Sleep(ctx context.Context, _ time.Duration) error {
	c.cancel()
	return ctx.Err()
}

// PERMISSION_DENIED is retried by WaitVisible alone: the interceptor and
// Do return it at once, even with the 404 opt-in and the very ErrorInfo
// (or none) that WaitVisible retries before its first good read.
func TestPermissionDeniedNotRetriedByTheInterceptor(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"IAM_PERMISSION_DENIED", ""} {
		h := newHarness(t, interceptor.WithRetryNotFound())
		s := &script{errs: []error{denied(reason), denied(reason)}}
		err := h.call(context.Background(), s, getServiceAccount, nil, interceptor.RetryNotFound())
		if s.calls != 1 || err != s.errs[0] || len(h.clock.Sleeps()) != 0 {
			t.Fatalf("reason %q: %d calls, %v, waits %v; want one call and the PERMISSION_DENIED", reason, s.calls, err, h.clock.Sleeps())
		}
		if a := h.attempts[0]; a.Reason != interceptor.NotRetryable || a.Class != codes.Permanent {
			t.Fatalf("reason %q: attempt %+v", reason, a)
		}
	}
}

func TestPermissionDeniedNotRetriedByDo(t *testing.T) {
	t.Parallel()
	for _, reason := range []string{"IAM_PERMISSION_DENIED", ""} {
		h := newHarness(t, interceptor.WithRetryNotFound())
		runs := 0
		pd := denied(reason)
		err := h.r.Do(context.Background(), "get robot", func(context.Context) error {
			runs++
			return pd
		})
		if runs != 1 || err != pd || len(h.clock.Sleeps()) != 0 {
			t.Fatalf("reason %q: %d runs, %v, waits %v; want one run and the PERMISSION_DENIED", reason, runs, err, h.clock.Sleeps())
		}
	}
}
