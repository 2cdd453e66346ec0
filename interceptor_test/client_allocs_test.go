package interceptor_test

import (
	"context"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/interceptor"
)

// TestNewClientAddsNoAllocation (issue 33 item 6): a call that succeeds at
// once through NewClient's admin client allocates no more than the same
// call through an admin client without iamretry (gax's retries and
// timeouts on, as its constructor sets them), over the fake's bufconn.
func TestNewClientAddsNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random: allocation counts over a connection are measured without it")
	}
	g := newRig(t, fakeOnVirtualClock())
	ctx := context.Background()
	plain, err := admin.NewIamClient(ctx, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	wired, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer wired.Close()
	sa, err := plain.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "robot-allocs"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name string
		call func(c *admin.IamClient) error
	}{
		{"GetServiceAccount", func(c *admin.IamClient) error {
			_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
			return err
		}},
		{"GetIamPolicy", func(c *admin.IamClient) error {
			_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name})
			return err
		}},
	} {
		measure := func(c *admin.IamClient) float64 {
			for range 20 { // warm both connections and pools
				if err := m.call(c); err != nil {
					t.Fatal(err)
				}
			}
			best := -1.0
			for range 5 { // the least of a few runs: gRPC's pools add noise, never fewer allocations
				n := testing.AllocsPerRun(200, func() {
					if err := m.call(c); err != nil {
						t.Fatal(err)
					}
				})
				if best < 0 || n < best {
					best = n
				}
			}
			return best
		}
		p, w := measure(plain), measure(wired)
		t.Logf("%s: %.1f allocations per call without iamretry, %.1f through NewClient's client", m.name, p, w)
		if w-p >= 0.5 {
			t.Errorf("%s: NewClient's client allocates %.1f per call, the plain client %.1f: %.1f added, want 0", m.name, w, p, w-p)
		}
	}
}
