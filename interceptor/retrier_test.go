package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/googleapis/gax-go/v2/apierror"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func fail(c grpccodes.Code, n int) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = status.Errorf(c, "%v #%d", c, i+1)
	}
	return errs
}

func TestEachTransientCodeRetriedWithDocumentedWaits(t *testing.T) {
	t.Parallel()
	for _, c := range []grpccodes.Code{grpccodes.Unavailable, grpccodes.Internal, grpccodes.DeadlineExceeded} {
		t.Run(c.String(), func(t *testing.T) {
			h := newHarness(t)
			s := &script{errs: fail(c, 5)}
			if err := h.call(context.Background(), s, getPolicy, nil); err != nil {
				t.Fatalf("err = %v", err)
			}
			if s.calls != 6 {
				t.Fatalf("calls = %d, want 6", s.calls)
			}
			// min(2^n + 0.5, 32) for n = 0..4.
			if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 4.5, 8.5, 16.5); !reflect.DeepEqual(got, want) {
				t.Fatalf("waits %v, want %v", got, want)
			}
		})
	}
}

func TestFreshRandomFractionPerRetry(t *testing.T) {
	t.Parallel()
	rs := []float64{0.1, 0.9, 0.3}
	i := 0
	h := newHarness(t, interceptor.WithRandom(func() float64 { r := rs[i%len(rs)]; i++; return r }))
	s := &script{errs: fail(grpccodes.Unavailable, 3)}
	if err := h.call(context.Background(), s, getPolicy, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := h.clock.Sleeps(), secs(1.1, 2.9, 4.3); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestRetryDeadlineTruncates(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // default deadline 60 s
	s := &script{errs: fail(grpccodes.Unavailable, 100)}
	err := h.call(context.Background(), s, getPolicy, nil)
	// 1.5+2.5+4.5+8.5+16.5 = 33.5 s; the next wait (32 s) would end at 65.5 s > 60 s.
	if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 4.5, 8.5, 16.5); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if s.calls != 6 {
		t.Fatalf("calls = %d, want 6", s.calls)
	}
	if err != s.errs[5] {
		t.Fatalf("err = %v, want the last server error unchanged (%v)", err, s.errs[5])
	}
	last := h.attempts[len(h.attempts)-1]
	if last.Retrying || last.Reason != interceptor.DeadlineReached || last.Wait != 0 || last.N != 6 || last.Elapsed != 33500*time.Millisecond {
		t.Fatalf("last attempt %+v", last)
	}
}

func TestLongerDeadlineReachesMaxBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithDeadline(300*time.Second), interceptor.WithMaxBackoff(64*time.Second))
	s := &script{errs: fail(grpccodes.Internal, 100)}
	_ = h.call(context.Background(), s, getPolicy, nil)
	want := secs(1.5, 2.5, 4.5, 8.5, 16.5, 32.5, 64, 64, 64) // 258.5 s; +64 > 300
	if got := h.clock.Sleeps(); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestContextDeadlineFailsFast(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithDeadline(0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := &script{errs: fail(grpccodes.Unavailable, 100)}
	start := time.Now()
	err := h.call(ctx, s, getPolicy, nil)
	// 1.5 + 2.5 + 4.5 = 8.5 s; the next wait (8.5 s) would end past 10 s.
	if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 4.5); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if err != s.errs[3] || status.Code(err) != grpccodes.Unavailable {
		t.Fatalf("err = %v, want the server's last error", err)
	}
	if last := h.attempts[len(h.attempts)-1]; last.Reason != interceptor.ContextDeadline {
		t.Fatalf("reason %v", last.Reason)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("did not fail fast")
	}
}

func TestCancelDuringWaitEndsAtOnce(t *testing.T) {
	t.Parallel()
	// Real clock: the first wait is an hour; the context is cancelled 20 ms
	// after the failed attempt is reported (so never before it, however
	// late a busy machine runs the timer). Returning within 30 s (a bound
	// far from both) shows the wait was cut short.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := interceptor.New(fixedRandom(0), interceptor.WithDeadline(2*time.Hour),
		interceptor.WithBackoff(interceptor.Backoff{Initial: time.Hour, Multiplier: 1, Max: time.Hour}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				time.AfterFunc(20*time.Millisecond, cancel)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	s := &script{errs: fail(grpccodes.Unavailable, 100)}
	start := time.Now()
	err = r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, s.invoke)
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("returned after %v: the wait was not cut short", d)
	}
	if status.Code(err) != grpccodes.Canceled {
		t.Fatalf("code %v, want Canceled (%v)", status.Code(err), err)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, s.errs[0]) {
		t.Fatalf("err %v should wrap context.Canceled and the server's error", err)
	}
	if codes.OfError(err) != codes.Permanent {
		t.Fatal("an interrupted call must not be retried by an outer layer")
	}
	if s.calls != 1 {
		t.Fatalf("calls = %d", s.calls)
	}
}

// stuckClock's time stands still and its Sleep lasts until the context ends,
// so the context's own deadline passes during a wait.
type stuckClock struct{ t time.Time }

func (c stuckClock) Now() time.Time { return c.t }
func (c stuckClock) Sleep(ctx context.Context, _ time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestContextDeadlineDuringWait(t *testing.T) {
	t.Parallel()
	r, err := interceptor.New(interceptor.WithClock(stuckClock{time.Now().Add(-time.Hour)}))
	if err != nil {
		t.Fatal(err)
	}
	// A second (was 30 ms): the deadline must not pass before the first
	// attempt, however late a busy machine runs it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s := &script{errs: fail(grpccodes.Internal, 100)}
	err = r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, s.invoke)
	if status.Code(err) != grpccodes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, s.errs[0]) {
		t.Fatalf("err = %v (code %v)", err, status.Code(err))
	}
	if !strings.Contains(err.Error(), "INTERNAL") && !strings.Contains(err.Error(), "Internal") {
		t.Fatalf("message %q should name the server's error", err)
	}
}

func TestMaxAttemptsCountsTheFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ max, calls int }{{1, 1}, {2, 2}, {3, 3}, {0, 6}} {
		h := newHarness(t, interceptor.WithMaxAttempts(tc.max))
		s := &script{errs: fail(grpccodes.Unavailable, 100)}
		err := h.call(context.Background(), s, getPolicy, nil)
		if s.calls != tc.calls || err != s.errs[tc.calls-1] {
			t.Fatalf("max %d: calls %d, err %v", tc.max, s.calls, err)
		}
		if tc.max > 0 && h.attempts[len(h.attempts)-1].Reason != interceptor.MaxAttempts {
			t.Fatalf("max %d: reason %v", tc.max, h.attempts[len(h.attempts)-1].Reason)
		}
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithPerAttemptTimeout(20*time.Millisecond))
	s := &script{block: 2}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := h.call(ctx, s, getPolicy, nil); err != nil {
		t.Fatalf("err = %v", err)
	}
	if s.calls != 3 {
		t.Fatalf("calls = %d, want 3", s.calls)
	}
	for i, c := range s.ctxs {
		dl, ok := c.Deadline()
		if !ok || time.Until(dl) > 20*time.Millisecond {
			t.Fatalf("attempt %d deadline %v (ok %v), want within 20ms", i+1, dl, ok)
		}
	}
}

func TestCallerDeadlineNotRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{block: 100}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := h.call(ctx, s, getPolicy, nil)
	if s.calls != 1 || status.Code(err) != grpccodes.DeadlineExceeded {
		t.Fatalf("calls %d err %v", s.calls, err)
	}
	if a := h.attempts[0]; a.Reason != interceptor.ContextDone || a.Retrying {
		t.Fatalf("attempt %+v", a)
	}
}

func TestNotFoundOptIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    []interceptor.Option
		perCall bool
		calls   int
	}{
		{"not asked", nil, false, 1},
		{"per call", nil, true, 3},
		{"every call", []interceptor.Option{interceptor.WithRetryNotFound()}, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts...)
			s := &script{errs: fail(grpccodes.NotFound, 2)}
			var err error
			if tc.perCall {
				err = h.call(context.Background(), s, "/google.iam.admin.v1.IAM/GetServiceAccount", nil, interceptor.RetryNotFound())
			} else {
				err = h.call(context.Background(), s, "/google.iam.admin.v1.IAM/GetServiceAccount", nil)
			}
			if s.calls != tc.calls {
				t.Fatalf("calls %d, want %d", s.calls, tc.calls)
			}
			if (tc.calls == 1) != (status.Code(err) == grpccodes.NotFound) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestNotRetried(t *testing.T) {
	t.Parallel()
	for _, c := range []grpccodes.Code{grpccodes.Aborted, grpccodes.PermissionDenied, grpccodes.InvalidArgument,
		grpccodes.FailedPrecondition, grpccodes.Unauthenticated, grpccodes.DataLoss, grpccodes.AlreadyExists} {
		h := newHarness(t)
		s := &script{errs: fail(c, 3)}
		err := h.call(context.Background(), s, getPolicy, nil)
		if s.calls != 1 || err != s.errs[0] {
			t.Fatalf("%v: calls %d err %v", c, s.calls, err)
		}
		if a := h.attempts[0]; a.Reason != interceptor.NotRetryable || a.Retrying || a.Class != codes.Of(c) {
			t.Fatalf("%v: attempt %+v", c, a)
		}
	}
}

func TestCustomSafeToRetryAndClassifier(t *testing.T) {
	t.Parallel()
	var asked []string
	h := newHarness(t,
		interceptor.WithSafeToRetry(func(m string, _ any) bool { asked = append(asked, m); return m == "/x.Y/Z" }),
		interceptor.WithClassifier(func(_ string, err error) codes.Class {
			if status.Code(err) == grpccodes.FailedPrecondition {
				return codes.Transient
			}
			return codes.OfError(err)
		}))
	s := &script{errs: fail(grpccodes.FailedPrecondition, 2)}
	if err := h.call(context.Background(), s, "/x.Y/Z", nil); err != nil || s.calls != 3 {
		t.Fatalf("err %v calls %d", err, s.calls)
	}
	s = &script{errs: fail(grpccodes.FailedPrecondition, 2)}
	if err := h.call(context.Background(), s, "/x.Y/W", nil); err == nil || s.calls != 1 {
		t.Fatalf("err %v calls %d", err, s.calls)
	}
	if len(asked) != 3 {
		t.Fatalf("asked %v", asked)
	}
}

func TestDisablePerCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{errs: fail(grpccodes.Unavailable, 3)}
	err := h.call(context.Background(), s, getPolicy, nil, interceptor.Disable())
	if s.calls != 1 || err != s.errs[0] || h.attempts[0].Reason != interceptor.Disabled {
		t.Fatalf("calls %d err %v attempts %+v", s.calls, err, h.attempts)
	}
}

func TestObserverSeesEveryFailedAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithMaxAttempts(3))
	s := &script{errs: []error{status.Error(grpccodes.Unavailable, "a"), status.Error(grpccodes.Internal, "b"), status.Error(grpccodes.Unavailable, "c")}}
	_ = h.call(context.Background(), s, getPolicy, nil)
	want := []interceptor.Attempt{
		{Method: getPolicy, N: 1, Err: s.errs[0], Class: codes.Transient, Wait: 1500 * time.Millisecond, Elapsed: 0, Retrying: true, Reason: interceptor.Retry},
		{Method: getPolicy, N: 2, Err: s.errs[1], Class: codes.Transient, Wait: 2500 * time.Millisecond, Elapsed: 1500 * time.Millisecond, Retrying: true, Reason: interceptor.Retry},
		{Method: getPolicy, N: 3, Err: s.errs[2], Class: codes.Transient, Wait: 0, Elapsed: 4 * time.Second, Retrying: false, Reason: interceptor.MaxAttempts},
	}
	if !reflect.DeepEqual(h.attempts, want) {
		t.Fatalf("attempts\n%+v\nwant\n%+v", h.attempts, want)
	}
}

func TestLoggerLevels(t *testing.T) {
	t.Parallel()
	type entry struct {
		level logging.Level
		msg   string
		code  string
	}
	var got []entry
	l := logging.LoggerFunc(func(_ context.Context, level logging.Level, msg string, fields ...any) {
		e := entry{level: level, msg: msg}
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "grpc.status" {
				e.code = fields[i+1].(string)
			}
		}
		got = append(got, e)
	})
	h := newHarness(t, interceptor.WithLogger(l), interceptor.WithMaxAttempts(2))
	_ = h.call(context.Background(), &script{errs: fail(grpccodes.Unavailable, 5)}, getPolicy, nil)
	_ = h.call(context.Background(), &script{errs: fail(grpccodes.PermissionDenied, 1)}, getPolicy, nil)
	_ = h.call(context.Background(), &script{errs: fail(grpccodes.Internal, 1)}, "/google.iam.admin.v1.IAM/CreateServiceAccountKey", nil)
	// A budget that allows one retry: the second call's retry is refused.
	tight := newHarness(t, interceptor.WithLogger(l), interceptor.WithRetryBudget(0, 0.001), interceptor.WithMaxAttempts(2))
	_ = tight.call(context.Background(), &script{errs: fail(grpccodes.Unavailable, 1)}, getPolicy, nil)
	_ = tight.call(context.Background(), &script{errs: fail(grpccodes.Unavailable, 1)}, getPolicy, nil)
	want := []entry{
		{logging.LevelInfo, "iamretry: retrying", "UNAVAILABLE"},
		{logging.LevelWarn, "iamretry: giving up", "UNAVAILABLE"},
		{logging.LevelDebug, "iamretry: not retried", "PERMISSION_DENIED"},
		{logging.LevelInfo, "iamretry: not retried", "INTERNAL"},
		{logging.LevelInfo, "iamretry: retrying", "UNAVAILABLE"},
		{logging.LevelInfo, "iamretry: succeeded after retries", ""}, // no error, no grpc.status
		{logging.LevelWarn, "iamretry: giving up", "UNAVAILABLE"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("log\n%+v\nwant\n%+v", got, want)
	}
}

func TestAttemptMetadata(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	md := metadata.Pairs("x-goog-request-params", "resource=projects/p")
	ctx := metadata.NewOutgoingContext(context.Background(), md)
	s := &script{errs: fail(grpccodes.Unavailable, 2)}
	if err := h.call(ctx, s, getPolicy, nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range s.mds {
		if got := m.Get("x-goog-request-params"); len(got) != 1 || got[0] != "resource=projects/p" {
			t.Fatalf("attempt %d lost the caller's metadata: %v", i+1, m)
		}
		got := m.Get(interceptor.AttemptMetadataKey)
		want := []string(nil)
		if i > 0 {
			want = []string{fmt.Sprint(i)}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("attempt %d: %s = %v, want %v", i+1, interceptor.AttemptMetadataKey, got, want)
		}
	}
	if len(md) != 1 || md.Get(interceptor.AttemptMetadataKey) != nil {
		t.Fatalf("the caller's metadata was changed: %v", md)
	}
}

func TestDoNeverRetriesConflict(t *testing.T) {
	t.Parallel()
	aborted := status.Error(grpccodes.Aborted, "There were concurrent policy changes.")
	h := newHarness(t)
	n := 0
	err := h.r.Do(context.Background(), "rmw", func(context.Context) error {
		n++
		return aborted
	})
	if err != aborted || n != 1 || h.attempts[0].Reason != interceptor.NotRetryable {
		t.Fatalf("n %d err %v attempts %+v", n, err, h.attempts)
	}
}

func TestDoUsesTheRetriersClassifier(t *testing.T) {
	t.Parallel()
	special := errors.New("try again")
	var gotMethod string
	h := newHarness(t, interceptor.WithClassifier(func(method string, err error) codes.Class {
		gotMethod = method
		if errors.Is(err, special) {
			return codes.Transient
		}
		return codes.OfError(err)
	}))
	n := 0
	err := h.r.Do(context.Background(), "my-op", func(context.Context) error {
		n++
		if n == 1 {
			return special
		}
		return nil
	})
	if err != nil || n != 2 || gotMethod != "my-op" || h.attempts[0].Method != "my-op" || h.attempts[0].Class != codes.Transient {
		t.Fatalf("err %v n %d method %q attempts %+v", err, n, gotMethod, h.attempts)
	}
	if !reflect.DeepEqual(h.clock.Sleeps(), secs(1.5)) {
		t.Fatalf("sleeps %v", h.clock.Sleeps())
	}
}

func TestDoRefusesNilFunc(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if err := h.r.Do(context.Background(), "op", nil); err == nil || !strings.Contains(err.Error(), "f is nil") {
		t.Fatalf("err %v", err)
	}
}

// TestDoHonoursRetryInfoOfRESTErrors pins the RetryInfo floor for the errors
// of REST clients under Retrier.Do: a 429 carrying RetryInfo (as a
// *googleapi.Error's JSON details, or a REST *apierror.APIError's) waits at
// least its retry_delay, not the backoff's 1.5 s.
func TestDoHonoursRetryInfoOfRESTErrors(t *testing.T) {
	t.Parallel()
	body := `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded.","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}`
	restErr := func() error {
		resp := &http.Response{StatusCode: 429, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		return googleapi.CheckResponse(resp)
	}
	apiErr := func() error {
		ae, ok := apierror.FromError(restErr())
		if !ok {
			t.Fatal("apierror.FromError did not wrap the REST error")
		}
		return ae
	}
	for name, mk := range map[string]func() error{"googleapi.Error": restErr, "apierror.APIError": apiErr} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			n := 0
			err := h.r.Do(context.Background(), "op", func(context.Context) error {
				if n++; n == 1 {
					return mk()
				}
				return nil
			})
			if err != nil || n != 2 {
				t.Fatalf("n %d err %v", n, err)
			}
			if got := h.attempts[0].Wait; got != 7*time.Second {
				t.Fatalf("wait %v, want RetryInfo's 7s", got)
			}
		})
	}
}
