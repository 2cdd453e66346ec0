package policy_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// TestConflictSchedule: reruns after a conflict follow the conflict
// schedule (ScaledConflicts by default), transient retries the documented
// formula, each counted in failures of its own kind (issue 28), and
// WithConflictBackoff(DocumentedConflicts) puts conflicts back on the
// documented formula, n counting conflicts.
func TestConflictSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts  []interceptor.Option
		popts []policy.Option
		want  []time.Duration
	}{
		// conflict 0: no rerun timed yet, so w = 100 ms: r = 0.5 falls in
		// the log-uniform [3w/4, 6w) part at 0.5/0.6, 75ms * 8^(5/6);
		// UNAVAILABLE on attempt 2: the first transient failure, 1s +
		// 0.5s; conflict 1: the window (L, W] of the horizon 26 s after the
		// first conflict, the clock 1.924 s past it: L = 26s/6 - 1.924s, W =
		// 26s - 1.924s, halfway.
		{nil, nil, []time.Duration{424264068, 1500 * time.Millisecond, 13242402598}},
		{nil, []policy.Option{policy.WithConflictBackoff(interceptor.SpreadConflicts)},
			[]time.Duration{1200 * time.Millisecond, 1500 * time.Millisecond, 12150 * time.Millisecond}},
		{nil, []policy.Option{policy.WithConflictBackoff(interceptor.DocumentedConflicts)},
			[]time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond, 2500 * time.Millisecond}},
		// maximum_backoff caps the conflict waits too.
		{[]interceptor.Option{interceptor.WithMaxBackoff(2 * time.Second)}, nil,
			[]time.Duration{424264068, 1500 * time.Millisecond, 2 * time.Second}},
	} {
		e := newEnv(t)
		h := &hookClient{Client: e.client}
		h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
			if n <= 2 { // a concurrent writer commits first
				e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
					{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
			}
			if n == 1 {
				e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
			}
			return nil
		}
		clk := vclock.New()
		r, err := interceptor.New(append([]interceptor.Option{interceptor.WithClock(clk), interceptor.WithRandom(func() float64 { return 0.5 })}, tc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		u, err := policy.NewUpdater(h, r, tc.popts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
			t.Fatal(err)
		}
		if got := clk.Sleeps(); !slices.Equal(got, tc.want) {
			t.Errorf("%d+%d options: waits %v, want %v", len(tc.opts), len(tc.popts), got, tc.want)
		}
		if e.sets() != 3 {
			t.Errorf("%d writes, want 3", e.sets())
		}
	}
}

func TestNewUpdaterTakesConflictBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.NewUpdater(e.client, r, policy.WithConflictBackoff(interceptor.DocumentedConflicts)); err != nil {
		t.Fatal(err)
	}
	if _, err := policy.NewUpdater(e.client, r, policy.WithConflictBackoff(5)); err == nil || !strings.Contains(err.Error(), "WithConflictBackoff(ConflictBackoff(5)): unknown schedule") {
		t.Fatalf("unknown schedule: %v", err)
	}
}

// TestConflictWaitsFitAShortDeadline: with a retry deadline shorter than
// SpreadConflicts' windows (the first rerun may wait up to 18 s), the reruns
// are drawn within the time left before the deadline instead of ending the
// call with a wait that would not fit: the change lands, every wait within
// the deadline. (Before, a draw near the top of the first window ended the
// call at its first conflict, and the change was lost.)
func TestConflictWaitsFitAShortDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n <= 3 { // a concurrent writer commits first, three times
			e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
				{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
		}
		return nil
	}
	const deadline = 5 * time.Second
	u, clk := updater(t, h, interceptor.WithDeadline(deadline), interceptor.WithRandom(func() float64 { return 0.99 }))
	start := clk.Now()
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatalf("3 conflicts within a 5 s deadline: %v; want the change to land", err)
	}
	if d := clk.Since(start); d >= deadline {
		t.Fatalf("landed after %v, past the %v deadline", d, deadline)
	}
	if w := clk.Sleeps(); len(w) != 3 {
		t.Fatalf("waits %v, want 3 (one per conflict)", w)
	}
	if e.sets() != 4 {
		t.Fatalf("%d writes, want 4", e.sets())
	}
}
