package policy_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// newAccountBatch is an Updater over a fake whose new service accounts stay
// invisible for 10 s of the Updater's clock, with its first read held (as
// holdFirstRead does) so that two callers can queue behind it into one
// batch. It records when (on that clock) each member first landed in a
// successful write.
type newAccountBatch struct {
	u       *policy.Updater
	clk     *vclock.Clock
	h       *hookClient
	member  string // a service account created at the start
	release func()
	first   chan result

	mu     sync.Mutex
	landed map[string]time.Duration // since the start
}

func newNewAccountBatch(t *testing.T, opts ...interceptor.Option) *newAccountBatch {
	t.Helper()
	_, client, clk, member := newAccountEnv(t)
	start := clk.Now()
	x := &newAccountBatch{clk: clk, member: member, first: make(chan result, 1), landed: map[string]time.Duration{}}
	gate := make(chan struct{})
	var once sync.Once
	x.release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(x.release)
	x.h = &hookClient{Client: client}
	x.h.beforeGet = func(ctx context.Context, n int) error {
		if n == 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	u, err := newUpdater(&landingClient{Client: x.h, x: x, start: start},
		append([]interceptor.Option{interceptor.WithClock(clk), interceptor.WithRandom(func() float64 { return 0.5 })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	x.u = u
	go func() {
		p, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:first@example.com"))
		x.first <- result{p, err}
	}()
	waitFor(t, "the first read", func() bool { return x.h.ngets.Load() == 1 })
	return x
}

// queue starts an Update and waits until it is queued behind the held one.
func (x *newAccountBatch) queue(t *testing.T, m policy.Mutation) chan result {
	t.Helper()
	before := policy.Pending(x.u, res)
	ch := make(chan result, 1)
	go func() {
		p, err := x.u.Update(context.Background(), res, m)
		ch <- result{p, err}
	}()
	waitFor(t, "the update to queue", func() bool { return policy.Pending(x.u, res) == before+1 })
	return ch
}

func (x *newAccountBatch) landedAt(member string) (time.Duration, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d, ok := x.landed[member]
	return d, ok
}

// landingClient records in x when each member first lands.
type landingClient struct {
	policy.Client
	x     *newAccountBatch
	start time.Time
}

func (c *landingClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	p, err := c.Client.SetIamPolicy(ctx, req, opts...)
	if err == nil {
		c.x.mu.Lock()
		for m := range members(p, "") {
			if _, ok := c.x.landed[m]; !ok {
				c.x.landed[m] = c.x.clk.Since(c.start)
			}
		}
		c.x.mu.Unlock()
	}
	return p, err
}

// TestBatchSplitGrantToNewAccount: two callers coalesced into one batch,
// the first granting a role to an account IAM cannot see yet (the Updater
// opted in with WithRetryNotFound), the second to a visible member. The
// batch's write is refused; the second caller's change lands at once, and
// only the first waits, until the account is visible (10 s).
func TestBatchSplitGrantToNewAccount(t *testing.T) {
	t.Parallel()
	x := newNewAccountBatch(t, interceptor.WithRetryNotFound())
	newcomer := x.queue(t, policy.AddBinding("roles/viewer", x.member))
	visible := x.queue(t, policy.AddBinding("roles/viewer", "user:b@example.com"))
	// Two threads of the clock: the visible member's caller, and the one
	// the new account's read-modify-write sleeps for (it no longer waits
	// behind it, so the two overlap in virtual time).
	var rv, r result
	x.clk.Go(context.Background(), 2, func(_ context.Context, i int) {
		if i == 2 {
			r = <-newcomer
			return
		}
		x.release()
		if r := <-x.first; r.err != nil {
			t.Error(r.err)
		}
		rv = <-visible
	})
	if rv.err != nil || members(rv.p, "roles/viewer")["user:b@example.com"] != 1 {
		t.Fatalf("the visible member's caller: %v, %v", rv.p, rv.err)
	}
	if d, ok := x.landedAt("user:b@example.com"); !ok || d != 0 {
		t.Fatalf("the visible member landed after %v (landed %v); want at once", d, ok)
	}
	if r.err != nil || members(r.p, "roles/viewer")[x.member] != 1 {
		t.Fatalf("the new account's caller: %v, %v", r.p, r.err)
	}
	if d, _ := x.landedAt(x.member); d < 10*time.Second || d > interceptor.DefaultDeadline {
		t.Fatalf("the new account landed after %v; want once visible (10 s), within the deadline", d)
	}
}

// Without the opt-in, the split gives the new account's caller the server's
// refusal at once, naming the option, and the visible member still lands.
func TestBatchSplitGrantToNewAccountWithoutOptIn(t *testing.T) {
	t.Parallel()
	x := newNewAccountBatch(t)
	newcomer := x.queue(t, policy.AddBinding("roles/viewer", x.member))
	visible := x.queue(t, policy.AddBinding("roles/viewer", "user:b@example.com"))
	x.release()
	<-x.first
	if r := <-visible; r.err != nil {
		t.Fatalf("the visible member's caller: %v", r.err)
	}
	r := <-newcomer
	if status.Code(r.err) != codes.InvalidArgument || !strings.Contains(r.err.Error(), "interceptor.WithRetryNotFound()") {
		t.Fatalf("the new account's caller: %v; want INVALID_ARGUMENT naming the option", r.err)
	}
	if s := x.clk.Sleeps(); len(s) != 0 {
		t.Fatalf("waits %v; want none", s)
	}
}

// PERMISSION_DENIED is never retried by the Updater, even with the 404
// opt-in and the ErrorInfo (IAM_PERMISSION_DENIED) that
// interceptor.WaitVisible retries before its first good read.
func TestPermissionDeniedNotRetriedByTheUpdater(t *testing.T) {
	t.Parallel()
	for _, method := range []iamtest.Method{iamtest.MethodGetIamPolicy, iamtest.MethodSetIamPolicy} {
		t.Run(string(method)[strings.LastIndex(string(method), "/")+1:], func(t *testing.T) {
			e := newEnv(t)
			e.srv.FailNextWith(method, 1, iamtest.PermissionDeniedError("resourcemanager.projects.setIamPolicy", res))
			u, clk := updater(t, e.client, interceptor.WithRetryNotFound())
			_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("code %v: %v", status.Code(err), err)
			}
			if e.srv.CountCalls(method) != 1 || len(clk.Sleeps()) != 0 {
				t.Fatalf("%d calls, waits %v; want 1 call, no wait", e.srv.CountCalls(method), clk.Sleeps())
			}
		})
	}
}
