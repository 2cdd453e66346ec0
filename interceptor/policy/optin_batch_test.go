package policy_test

import (
	"context"
	"sync"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestRetryNotFoundContextHonouredWhenCoalesced: an Update whose context
// carries RetryNotFoundContext waits for a member not visible yet also when
// it queues behind an Update without the opt-in (a coalesced batch runs
// under one caller's context values: the two are not batched together),
// and the other Update lands.
func TestRetryNotFoundContextHonouredWhenCoalesced(t *testing.T) {
	t.Parallel()
	srv, client, clk, member := newAccountEnv(t)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	h := &hookClient{Client: client}
	h.beforeGet = func(ctx context.Context, n int) error {
		if n == 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	u, err := newUpdater(h, interceptor.WithClock(clk)) // no opt-in on the Retrier
	if err != nil {
		t.Fatal(err)
	}
	start := func(ctx context.Context, m policy.Mutation) chan result {
		ch := make(chan result, 1)
		go func() {
			p, err := u.Update(ctx, res, m)
			ch <- result{p, err}
		}()
		return ch
	}
	first := start(context.Background(), policy.AddBinding("roles/viewer", "user:first@example.com"))
	waitFor(t, "the first read", func() bool { return h.ngets.Load() == 1 })
	a := start(context.Background(), policy.AddBinding("roles/viewer", "user:a@example.com"))
	waitFor(t, "a to queue", func() bool { return policy.Pending(u, res) == 1 })
	b := start(interceptor.RetryNotFoundContext(context.Background()), policy.AddBinding("roles/viewer", member))
	waitFor(t, "b to queue", func() bool { return policy.Pending(u, res) == 2 })
	release()
	for name, ch := range map[string]chan result{"first": first, "a": a, "b": b} {
		if r := <-ch; r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
	}
	if m := members(srv.Policy(res), "roles/viewer"); m["user:a@example.com"] != 1 || m[member] != 1 {
		t.Fatalf("stored %v", m)
	}
}

// TestDisableContextNotSharedWhenCoalesced: an Update under DisableContext
// and a plain one queued behind the same read-modify-write are never one
// batch (a batch runs under its first caller's context values): when the
// write after the first batch's is refused UNAVAILABLE, the caller that
// asked for no retries gets that failure, and the plain one is not failed
// by its neighbour's DisableContext.
func TestDisableContextNotSharedWhenCoalesced(t *testing.T) {
	t.Parallel()
	srv, client, clk, _ := newAccountEnv(t)
	gate := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	h := &hookClient{Client: client}
	h.beforeGet = func(ctx context.Context, n int) error {
		if n == 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 2 { // the write of the batch after the first
			return status.Error(codes.Unavailable, "injected")
		}
		return nil
	}
	u, err := newUpdater(h, interceptor.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	start := func(ctx context.Context, m policy.Mutation) chan result {
		ch := make(chan result, 1)
		go func() {
			p, err := u.Update(ctx, res, m)
			ch <- result{p, err}
		}()
		return ch
	}
	first := start(context.Background(), policy.AddBinding("roles/viewer", "user:first@example.com"))
	waitFor(t, "the first read", func() bool { return h.ngets.Load() == 1 })
	a := start(interceptor.DisableContext(context.Background()), policy.AddBinding("roles/viewer", "user:a@example.com"))
	waitFor(t, "a to queue", func() bool { return policy.Pending(u, res) == 1 })
	b := start(context.Background(), policy.AddBinding("roles/viewer", "user:b@example.com"))
	waitFor(t, "b to queue", func() bool { return policy.Pending(u, res) == 2 })
	release()
	if r := <-first; r.err != nil {
		t.Fatalf("first: %v", r.err)
	}
	if r := <-a; status.Code(r.err) != codes.Unavailable {
		t.Fatalf("a (DisableContext): %v, want its write's UNAVAILABLE", r.err)
	}
	if r := <-b; r.err != nil {
		t.Fatalf("b (no DisableContext) failed: %v", r.err)
	}
	if m := members(srv.Policy(res), "roles/viewer"); m["user:b@example.com"] != 1 || m["user:a@example.com"] != 0 {
		t.Fatalf("stored %v", m)
	}
}
