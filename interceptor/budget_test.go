package interceptor_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// steadyClock is time the test moves by hand: Sleep returns at once without
// moving it, so each call's retries happen "at once" and only the budget can
// stop them within the attempt cap.
type steadyClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steadyClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
func (c *steadyClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
func (c *steadyClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type outageRun struct{ requests, attempts, retries, refused int }

// runOutage sends rate calls a second for d, each failing UNAVAILABLE while
// down() says so, and counts what reached the server.
func runOutage(t *testing.T, r *interceptor.Retrier, clk *steadyClock, rate int, d time.Duration, down func() bool) outageRun {
	t.Helper()
	var run outageRun
	unavailable := status.Error(grpccodes.Unavailable, "outage")
	inv := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		run.attempts++
		if down() {
			return unavailable
		}
		return nil
	}
	step := time.Second / time.Duration(rate)
	for i := 0; i < int(d/step); i++ {
		run.requests++
		_ = callWith(r, inv)
		clk.advance(step)
	}
	run.retries = run.attempts - run.requests
	return run
}

func TestRetryBudgetHoldsUnderFullOutage(t *testing.T) {
	t.Parallel()
	const rate, secsDown = 100, 60
	var results [2]outageRun
	for i, withBudget := range []bool{true, false} {
		clk := &steadyClock{now: time.Unix(1e9, 0)}
		refused := 0
		opts := []interceptor.Option{
			interceptor.WithClock(clk), interceptor.WithMaxAttempts(6),
			interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
				if a.Reason == interceptor.BudgetExhausted {
					refused++
				}
			}),
		}
		if !withBudget {
			opts = append(opts, interceptor.WithoutRetryBudget())
		}
		r, err := interceptor.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		results[i] = runOutage(t, r, clk, rate, secsDown*time.Second, func() bool { return true })
		results[i].refused = refused
	}
	on, off := results[0], results[1]
	t.Logf("full outage, %d calls/s for %d s, max 6 attempts: budget on: %d requests, %d retries (ratio %.3f, %d refused); off: %d retries (ratio %.3f)",
		rate, secsDown, on.requests, on.retries, float64(on.retries)/float64(on.requests), on.refused, off.retries, float64(off.retries)/float64(off.requests))
	// Allowed: the saved-up bank (100 retries) and a second's floor at the
	// start, then 20% of calls plus 10 a second.
	limit := 100 + interceptor.DefaultBudgetPerSecond + int(interceptor.DefaultBudgetRatio*float64(on.requests)) + interceptor.DefaultBudgetPerSecond*secsDown
	if on.retries > limit {
		t.Fatalf("budget on: %d retries > %d allowed", on.retries, limit)
	}
	if ratio := float64(on.retries) / float64(on.requests); ratio > 0.35 {
		t.Fatalf("budget on: retry ratio %.3f", ratio)
	}
	if off.retries != 5*off.requests {
		t.Fatalf("budget off: %d retries for %d requests, want 5 each", off.retries, off.requests)
	}
	if on.refused == 0 {
		t.Fatal("observers were not told of refused retries")
	}
}

func TestRetryBudgetRecovers(t *testing.T) {
	t.Parallel()
	clk := &steadyClock{now: time.Unix(1e9, 0)}
	r, err := interceptor.New(interceptor.WithClock(clk), interceptor.WithMaxAttempts(3))
	if err != nil {
		t.Fatal(err)
	}
	down := true
	out := runOutage(t, r, clk, 100, 30*time.Second, func() bool { return down })
	if out.retries >= 2*out.requests {
		t.Fatal("the budget did not hold")
	}
	// Recovery: a minute of healthy calls, then one failing call may retry
	// in full again.
	down = false
	runOutage(t, r, clk, 100, time.Minute, func() bool { return down })
	s := &script{errs: fail(grpccodes.Unavailable, 2)}
	if err := r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, s.invoke); err != nil || s.calls != 3 {
		t.Fatalf("after recovery: calls %d err %v", s.calls, err)
	}
}

func TestInvalidBudgetOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ratio, per float64
		want       string
	}{
		{-0.1, 10, "ratio is -0.1"},
		{1.5, 10, "ratio is 1.5"},
		{0.2, -1, "perSecond is -1"},
		{0, 0, "allows no retry at all"},
	} {
		_, err := interceptor.New(interceptor.WithRetryBudget(tc.ratio, tc.per))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithRetryBudget(%v, %v): %v", tc.ratio, tc.per, err)
		}
	}
}

// TestRetryBudgetRefusesRatioItCannotCount: a ratio above 0 but below what
// the budget counts (one millionth) is refused with a message naming the
// option and the smallest accepted value, never rounded to 0.
func TestRetryBudgetRefusesRatioItCannotCount(t *testing.T) {
	t.Parallel()
	for _, ratio := range []float64{1e-7, 4e-7, 9.99e-7} {
		_, err := interceptor.New(interceptor.WithRetryBudget(ratio, 0))
		if err == nil || !strings.Contains(err.Error(), "WithRetryBudget") || !strings.Contains(err.Error(), "0.000001") {
			t.Errorf("WithRetryBudget(%v, 0): %v, want an error naming the option and 0.000001", ratio, err)
		}
	}
	if interceptor.MinBudgetRatio != 0.000001 {
		t.Errorf("MinBudgetRatio = %v", interceptor.MinBudgetRatio)
	}
}

// TestSmallRetryBudgetRatioStillRetries: a small ratio the budget can count
// (0.0004, which once rounded to 0) starts with a full bank, so a fresh
// Retrier lets a lone failing call retry.
func TestSmallRetryBudgetRatioStillRetries(t *testing.T) {
	t.Parallel()
	for _, ratio := range []float64{interceptor.MinBudgetRatio, 0.0004} {
		clk := &steadyClock{now: time.Unix(1e9, 0)}
		r, err := interceptor.New(interceptor.WithClock(clk), interceptor.WithRetryBudget(ratio, 0), interceptor.WithMaxAttempts(3))
		if err != nil {
			t.Fatalf("WithRetryBudget(%v, 0): %v", ratio, err)
		}
		calls := 0
		invoke := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			calls++
			if calls < 3 {
				return status.Error(grpccodes.Unavailable, "down")
			}
			return nil
		}
		if err := r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, invoke); err != nil || calls != 3 {
			t.Errorf("ratio %v: %d calls, err %v; want 3 calls and success", ratio, calls, err)
		}
	}
}
