package policy_test

import (
	"context"
	"sync"
	"testing"

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
