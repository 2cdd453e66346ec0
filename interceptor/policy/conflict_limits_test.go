package policy_test

import (
	"context"
	"math"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestNaNRandomConflictWait: a random source that returns NaN
// (out of its contract) never makes a conflict rerun's wait negative: the
// Updater still waits (the virtual clock moves), and observers see no
// negative Wait. Before the fix the conflict schedule turned NaN into the
// most negative Duration: an immediate rerun reported with a wait of
// -2562047h.
func TestNaNRandomConflictWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var waits []time.Duration
	u, clk := updater(t, e.client, interceptor.WithRandom(func() float64 { return math.NaN() }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				waits = append(waits, a.Wait)
			}
		}))
	e.srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 2)
	before := clk.Now()
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 2 {
		t.Fatalf("%d reruns, want 2 (waits %v)", len(waits), waits)
	}
	var sum time.Duration
	for _, w := range waits {
		if w < 0 {
			t.Fatalf("a negative wait: %v", waits)
		}
		sum += w
	}
	if d := clk.Now().Sub(before); d != sum || d <= 0 {
		t.Fatalf("the clock moved %v, the waits were %v", d, waits)
	}
}

// optsClient records the CallOptions of each call.
type optsClient struct {
	policy.Client
	opts [][]gax.CallOption
}

func (c *optsClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	c.opts = append(c.opts, opts)
	return c.Client.GetIamPolicy(ctx, req, opts...)
}

func (c *optsClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	c.opts = append(c.opts, opts)
	return c.Client.SetIamPolicy(ctx, req, opts...)
}

// TestCallOptionsTurnGAXRetriesOff: every call the Updater
// makes carries CallOptions that turn a GAPIC client's own retries off
// (the Client doc used to say it calls without CallOptions).
func TestCallOptionsTurnGAXRetriesOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &optsClient{Client: e.client}
	u, _ := updater(t, c)
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	if len(c.opts) != 2 {
		t.Fatalf("%d calls, want a read and a write", len(c.opts))
	}
	for i, opts := range c.opts {
		s := gax.CallSettings{Retry: func() gax.Retryer { return gax.OnCodes(nil, gax.Backoff{}) }}
		for _, o := range opts {
			o.Resolve(&s)
		}
		if s.Retry != nil {
			t.Errorf("call %d: its CallOptions leave the client's retries on", i+1)
		}
	}
}
