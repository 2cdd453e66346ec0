package interceptor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// realInvoker is what grpc-go's invoker does with an ended context: it
// sends nothing and returns the context's status. Otherwise it runs s.
func (s *script) realInvoker() func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if ctx.Err() != nil {
			s.mu.Lock()
			s.calls++
			s.mu.Unlock()
			return contextStatus(ctx)
		}
		return s.invoke(ctx, getPolicy, nil, nil, nil)
	}
}

// Cancelled before the first attempt: one attempt (the invoker decides
// what to do with a dead context), its error unchanged, no wait.
func TestCancelBeforeFirstAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &script{errs: fail(grpccodes.Unavailable, 5)}
	err := h.call(ctx, s, getPolicy, nil)
	if err != s.errs[0] {
		t.Fatalf("err = %v, want the invoker's error unchanged", err)
	}
	if s.calls != 1 || len(h.clock.Sleeps()) != 0 {
		t.Fatalf("calls %d, sleeps %v; want 1 call, no wait", s.calls, h.clock.Sleeps())
	}
	if len(h.attempts) != 1 || h.attempts[0].Reason != interceptor.ContextDone || h.attempts[0].Retrying {
		t.Fatalf("attempts %+v", h.attempts)
	}
}

// Cancelled during an attempt: the attempt's error, no retry.
func TestCancelDuringAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &script{block: 1}
	time.AfterFunc(10*time.Millisecond, cancel)
	err := h.call(ctx, s, getPolicy, nil)
	if status.Code(err) != grpccodes.Canceled || s.calls != 1 || len(h.clock.Sleeps()) != 0 {
		t.Fatalf("err %v calls %d sleeps %v", err, s.calls, h.clock.Sleeps())
	}
}

// cancellingClock cancels the context in the middle of the wait number
// at (1-based) and then behaves as the wall clock would in the race where
// the timer fires as the context ends: asleep reports whether the Sleep
// noticed the cancellation.
type cancellingClock struct {
	*vclock.Clock
	at, n   int
	cancel  context.CancelFunc
	noticed bool
}

func (c *cancellingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.n++
	if c.n == c.at {
		c.cancel()
		if c.noticed {
			return ctx.Err()
		}
		return nil // the timer won the select: the wait completed
	}
	return c.Clock.Sleep(ctx, d)
}

// Cancelled during a wait (the Sleep sees it) or at the end of a wait (the
// timer and the cancellation race, and the timer wins): either way no
// further attempt is sent, and the error has the context's code and wraps
// the server's last error, as the package promises for a context that
// ends during a wait.
func TestCancelDuringAndAtEndOfWait(t *testing.T) {
	t.Parallel()
	for _, noticed := range []bool{true, false} {
		for _, at := range []int{1, 3} {
			ctx, cancel := context.WithCancel(context.Background())
			clk := &cancellingClock{Clock: vclock.New(), at: at, cancel: cancel, noticed: noticed}
			var last interceptor.Attempt
			r, err := interceptor.New(interceptor.WithClock(clk), fixedRandom(0.5),
				interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { last = a }))
			if err != nil {
				t.Fatal(err)
			}
			s := &script{errs: fail(grpccodes.Unavailable, 10)}
			inv := s.realInvoker()
			err = r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil,
				func(ctx context.Context, _ string, _, _ any, _ *grpcClientConn, _ ...grpcCallOption) error {
					return inv(ctx)
				})
			if s.calls != at {
				t.Errorf("noticed %v, cancel in wait %d: %d attempts, want %d (none after the cancellation)", noticed, at, s.calls, at)
			}
			if status.Code(err) != grpccodes.Canceled || !errors.Is(err, context.Canceled) || !errors.Is(err, s.errs[at-1]) {
				t.Errorf("noticed %v, cancel in wait %d: err %v (code %v), want CANCELED wrapping the server's error %v", noticed, at, err, status.Code(err), s.errs[at-1])
			}
			if last.Reason != interceptor.ContextDone || last.Retrying {
				t.Errorf("noticed %v, cancel in wait %d: final report %+v", noticed, at, last)
			}
			// Do: f must not run again after the cancellation either.
			ctx, cancel = context.WithCancel(context.Background())
			clk.n, clk.cancel = 0, cancel
			runs := 0
			err = r.Do(ctx, "op", func(ctx context.Context) error {
				runs++
				return status.Error(grpccodes.Unavailable, "down")
			})
			if runs != at || status.Code(err) != grpccodes.Canceled {
				t.Errorf("Do, noticed %v, cancel in wait %d: f ran %d times, want %d; err %v", noticed, at, runs, at, err)
			}
			cancel()
		}
	}
}

// A context deadline shorter than the first wait: the call ends at once
// with the server's error, unchanged, and no wait is started.
func TestContextDeadlineShorterThanFirstWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The deadline is set on the virtual clock, moved an hour ahead of the
	// wall clock first: 500 ms away for the Retrier, an hour away in real
	// time, so it cannot pass before the attempt on a busy machine.
	h.clock.Advance(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), h.clock.Now().Add(500*time.Millisecond))
	defer cancel()
	s := &script{errs: fail(grpccodes.Internal, 5)}
	err := h.call(ctx, s, getPolicy, nil)
	if err != s.errs[0] || s.calls != 1 || len(h.clock.Sleeps()) != 0 {
		t.Fatalf("err %v calls %d sleeps %v", err, s.calls, h.clock.Sleeps())
	}
	if a := h.attempts[0]; a.Reason != interceptor.ContextDeadline || a.Retrying || a.Wait != 0 {
		t.Fatalf("attempt %+v", a)
	}
}

// A retry deadline shorter than the first wait: same, Reason DeadlineReached.
func TestRetryDeadlineShorterThanFirstWait(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{1, time.Second} { // the first wait is 1.5 s
		h := newHarness(t, interceptor.WithDeadline(d))
		s := &script{errs: fail(grpccodes.Internal, 5)}
		err := h.call(context.Background(), s, getPolicy, nil)
		if err != s.errs[0] || s.calls != 1 || len(h.clock.Sleeps()) != 0 || h.attempts[0].Reason != interceptor.DeadlineReached {
			t.Fatalf("WithDeadline(%v): err %v calls %d sleeps %v attempts %+v", d, err, s.calls, h.clock.Sleeps(), h.attempts)
		}
	}
}

// Attempt caps of 1, at the Retrier and per call, and the per-call cap
// overriding the Retrier's both ways.
func TestAttemptCapsOfOne(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []interceptor.Option
		call  []grpcCallOption
		calls int
	}{
		{"WithMaxAttempts(1)", []interceptor.Option{interceptor.WithMaxAttempts(1)}, nil, 1},
		{"CallMaxAttempts(1)", nil, []grpcCallOption{interceptor.CallMaxAttempts(1)}, 1},
		{"CallMaxAttempts(3) over WithMaxAttempts(1)", []interceptor.Option{interceptor.WithMaxAttempts(1)}, []grpcCallOption{interceptor.CallMaxAttempts(3)}, 3},
		{"CallMaxAttempts(0) lifts WithMaxAttempts(1)", []interceptor.Option{interceptor.WithMaxAttempts(1)}, []grpcCallOption{interceptor.CallMaxAttempts(0)}, 5},
	} {
		h := newHarness(t, tc.opts...)
		s := &script{errs: fail(grpccodes.Unavailable, 4)}
		_ = h.call(context.Background(), s, getPolicy, nil, tc.call...)
		if s.calls != tc.calls {
			t.Errorf("%s: %d calls, want %d", tc.name, s.calls, tc.calls)
		}
		// The invoker is called once per attempt, and observers number them.
		for i, a := range h.attempts {
			if a.Reason != interceptor.Succeeded && a.N != i+1 {
				t.Errorf("%s: attempt %d reported as N=%d", tc.name, i+1, a.N)
			}
		}
	}
}
