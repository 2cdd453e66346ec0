package policy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// The Updater runs on the Retrier it is given: what the Retrier says holds
// for the Updater too.

// TestUpdaterPerAttemptTimeoutBoundsEachCall: r's per-attempt timeout
// bounds each GetIamPolicy and SetIamPolicy call (each gets a context of
// its own with that deadline); a read it cuts off is rerun.
func TestUpdaterPerAttemptTimeoutBoundsEachCall(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	check := func(what string, ctx context.Context) {
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > d {
			t.Errorf("%s: deadline set %v, in %v; want within %v", what, ok, time.Until(dl), d)
		}
	}
	h.beforeGet = func(ctx context.Context, n int) error {
		check("read", ctx)
		if n == 1 { // hung: only the timeout ends it
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	}
	h.beforeSet = func(ctx context.Context, _ int, _ *iampb.SetIamPolicyRequest) error {
		check("write", ctx)
		return nil
	}
	r, err := interceptor.New(interceptor.WithClock(vclock.New()), interceptor.WithPerAttemptTimeout(d))
	if err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(h, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	// 2 reads and 1 write, unless a busy machine made a later call outlast
	// the timeout too.
	if h.ngets.Load() < 2 || h.nsets.Load() < 1 {
		t.Fatalf("%d reads, %d writes; want the hung read cut off and rerun", h.ngets.Load(), h.nsets.Load())
	}
}

// stillClock never moves: only the budget stops the retries.
type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time                                   { return c.now }
func (c stillClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// TestUpdaterSharesTheRetriersBudget: an outage that spent r's retry
// budget through another face (Do here; the interceptor alike) leaves the
// Updater none: its transient failure is not retried.
func TestUpdaterSharesTheRetriersBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var reasons []interceptor.Reason
	r, err := interceptor.New(interceptor.WithClock(stillClock{time.Unix(1e9, 0)}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Method == policy.UpdateMethod {
				mu.Lock()
				reasons = append(reasons, a.Reason)
				mu.Unlock()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	down := status.Error(codes.Unavailable, "outage")
	if err := r.Do(context.Background(), "outage", func(context.Context) error { return down }); err != down {
		t.Fatalf("Do: %v", err)
	}
	u, err := policy.NewUpdater(e.client, r)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.Unavailable || e.gets() != 1 {
		t.Fatalf("err %v after %d reads; want UNAVAILABLE after 1 (no budget left)", err, e.gets())
	}
	if len(reasons) != 1 || reasons[0] != interceptor.BudgetExhausted {
		t.Fatalf("reasons %v", reasons)
	}
}

// TestUpdaterConflictsDoNotCountTowardMaxAttempts: WithMaxAttempts(1)
// (never retry a single call) still lets the Updater rerun after conflicts,
// which would otherwise lose the change.
func TestUpdaterConflictsDoNotCountTowardMaxAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := interceptor.New(interceptor.WithClock(vclock.New()), interceptor.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(e.client, r)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 2)
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatalf("2 conflicts under WithMaxAttempts(1): %v", err)
	}
	if e.sets() != 3 {
		t.Fatalf("%d writes, want 3", e.sets())
	}
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:b@example.com"))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("a transient failure under WithMaxAttempts(1): %v; want it returned", err)
	}
}

// TestUpdateRetryNotFoundContext: the per-call 404 opt-in on an Update's
// context applies to a grant to a member not visible yet.
func TestUpdateRetryNotFoundContext(t *testing.T) {
	t.Parallel()
	_, client, clk, member := newAccountEnv(t)
	r, err := interceptor.New(interceptor.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(client, r)
	if err != nil {
		t.Fatal(err)
	}
	ctx := interceptor.RetryNotFoundContext(context.Background())
	got, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", member))
	if err != nil {
		t.Fatal(err)
	}
	if members(got, "roles/viewer")[member] != 1 {
		t.Fatalf("policy %v lacks %s", got, member)
	}
}
