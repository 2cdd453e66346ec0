package interceptor_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// One owner per call: Do and WaitVisible over a client that carries a
// Retrier's interceptor (a different Retrier, with a longer schedule of its
// own) or RoundTripper: the server sees exactly the owner's attempts.
func TestOneOwnerPerCallCountsTheServersCalls(t *testing.T) {
	t.Parallel()
	clock := vclock.New()
	outer, err := interceptor.New(interceptor.WithClock(clock), fixedRandom(0.5), interceptor.WithMaxAttempts(3))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := interceptor.New(interceptor.WithClock(clock), fixedRandom(0.5), interceptor.WithMaxAttempts(10), interceptor.WithRetryNotFound())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Do over the interceptor", func(t *testing.T) {
		s := &script{errs: fail(grpccodes.Unavailable, 100)}
		err := outer.Do(context.Background(), "op", func(ctx context.Context) error {
			return inner.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, s.invoke)
		})
		if s.calls != 3 || err != s.errs[2] {
			t.Fatalf("server saw %d calls, want 3; err %v", s.calls, err)
		}
	})
	t.Run("Do over the RoundTripper", func(t *testing.T) {
		base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable(), unavailable(), unavailable(), unavailable()}}
		rt := inner.RoundTripper(base)
		err := outer.Do(context.Background(), "op", func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rolesURL, nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode >= 400 {
				return status.Error(grpccodes.Unavailable, resp.Status)
			}
			return nil
		})
		if len(base.bodies) != 3 || status.Code(err) != grpccodes.Unavailable {
			t.Fatalf("server saw %d requests, want 3; err %v", len(base.bodies), err)
		}
	})
	t.Run("WaitVisible over the interceptor", func(t *testing.T) {
		s := &script{errs: []error{status.Error(grpccodes.NotFound, "nf"), status.Error(grpccodes.NotFound, "nf")}}
		_, err := interceptor.WaitVisible(context.Background(), outer, "sa", func(ctx context.Context) (int, error) {
			return 1, inner.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, s.invoke)
		}, interceptor.ConsecutiveReads(1))
		if s.calls != 3 || err != nil {
			t.Fatalf("server saw %d calls, want 3; err %v", s.calls, err)
		}
	})
	t.Run("nested Do", func(t *testing.T) {
		runs := 0
		err := outer.Do(context.Background(), "outer", func(ctx context.Context) error {
			return inner.Do(ctx, "inner", func(context.Context) error {
				runs++
				return status.Error(grpccodes.Unavailable, "down")
			})
		})
		// The inner Do is an owner too: it retries f on its own schedule,
		// so nested owners multiply (Do's doc says so: do not nest them).
		// 3 outer attempts, each an inner Do of 6 (its 60 s deadline ends
		// the 7th wait).
		if err == nil || runs != 3*6 {
			t.Fatalf("runs %d (want 3*6: nested owners multiply, as documented) err %v", runs, err)
		}
	})
}

// The options at their extremes: the largest durations and counts are
// accepted and a failing call still ends (within its context) with the
// server's error, never a wrapped-around negative deadline.
func TestOptionsAtTheirExtremes(t *testing.T) {
	t.Parallel()
	longest := time.Duration(math.MaxInt64)
	for name, opts := range map[string][]interceptor.Option{
		"WithDeadline(MaxInt64)":          {interceptor.WithDeadline(longest)},
		"WithPerAttemptTimeout(MaxInt64)": {interceptor.WithPerAttemptTimeout(longest)},
		"WithMaxAttempts(MaxInt)":         {interceptor.WithMaxAttempts(math.MaxInt)},
		"WithMaxBackoff(MaxInt64)":        {interceptor.WithMaxBackoff(longest)},
		"1ns everything":                  {interceptor.WithBackoff(interceptor.Backoff{Initial: 1, Multiplier: 1, Max: 1}), interceptor.WithDeadline(1), interceptor.WithPerAttemptTimeout(1)},
		"WithRetryBudget(1, MaxFloat64)":  {interceptor.WithRetryBudget(1, math.MaxFloat64)},
		"WithRetryBudget(MinRatio, 0)":    {interceptor.WithRetryBudget(interceptor.MinBudgetRatio, 0)},
	} {
		h := newHarness(t, append(opts, interceptor.WithMaxAttempts(4))...)
		if name == "WithMaxAttempts(MaxInt)" {
			h = newHarness(t, opts...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		s := &script{errs: fail(grpccodes.Unavailable, 1000)}
		err := h.call(ctx, s, getPolicy, nil)
		cancel()
		if status.Code(err) != grpccodes.Unavailable && status.Code(err) != grpccodes.DeadlineExceeded {
			t.Errorf("%s: err %v", name, err)
		}
		if s.calls < 1 {
			t.Errorf("%s: no call", name)
		}
		for _, w := range h.clock.Sleeps() {
			if w <= 0 {
				t.Errorf("%s: a wait of %v", name, w)
			}
		}
	}
	// Per call, the same extremes.
	h := newHarness(t)
	s := &script{errs: fail(grpccodes.Unavailable, 3)}
	err := h.call(context.Background(), s, getPolicy, nil, interceptor.CallDeadline(longest), interceptor.CallMaxAttempts(math.MaxInt), interceptor.CallPerAttemptTimeout(longest))
	if err != nil || s.calls != 4 {
		t.Fatalf("per-call extremes: err %v calls %d", err, s.calls)
	}
	// And the invalid ones refuse the call before anything is sent.
	for _, o := range []grpcCallOption{interceptor.CallDeadline(-1), interceptor.CallMaxAttempts(math.MinInt), interceptor.CallPerAttemptTimeout(-longest - 1)} {
		s := &script{}
		err := h.call(context.Background(), s, getPolicy, nil, o)
		if status.Code(err) != grpccodes.InvalidArgument || s.calls != 0 {
			t.Errorf("%v: err %v calls %d", o, err, s.calls)
		}
	}
}

// WaitVisible cancelled during a wait that confirms a good read: the value
// of that read comes back with an error of the context's code that wraps
// the *UnconfirmedError.
func TestWaitVisibleCancelledWhileConfirming(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	clk := &cancellingClock{Clock: vclock.New(), at: 1, cancel: cancel, noticed: true}
	r, err := interceptor.New(interceptor.WithClock(clk), fixedRandom(0.5))
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	v, err := interceptor.WaitVisible(ctx, r, "sa", func(context.Context) (string, error) { reads++; return "acct", nil })
	var ue *interceptor.UnconfirmedError
	if v != "acct" || reads != 1 || status.Code(err) != grpccodes.Canceled || !errors.As(err, &ue) || ue.Reads != 1 {
		t.Fatalf("v %q reads %d err %v", v, reads, err)
	}
	// A read that panics reaches the caller; a nil read, nil Retrier and
	// silly counts are refused before any read.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the read's panic was swallowed")
			}
		}()
		_, _ = interceptor.WaitVisible(context.Background(), r, "sa", func(context.Context) (int, error) { panic("read") })
	}()
	for _, o := range []interceptor.VisibleOption{nil, interceptor.ConsecutiveReads(0), interceptor.ConsecutiveReads(math.MinInt), interceptor.PermissionDeniedRetries(-1)} {
		n := 0
		if _, err := interceptor.WaitVisible(context.Background(), r, "sa", func(context.Context) (int, error) { n++; return 0, nil }, o); err == nil || n != 0 {
			t.Errorf("option accepted or read made: err %v reads %d", err, n)
		}
	}
}
