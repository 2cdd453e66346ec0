package deny_test

import (
	"context"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestCreateIfAbsent: with the opt-in, a policy that does not exist is
// created holding the rule added (its operation waited for); without it,
// GetPolicy's NOT_FOUND is returned and nothing is created.
func TestCreateIfAbsent(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			g := newRig(t, tr, nil)
			ctx := context.Background()
			_, err := g.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if status.Code(err) != grpccodes.NotFound {
				t.Fatalf("without CreateIfAbsent: %v, want NOT_FOUND", err)
			}
			if g.srv.DenyPolicy(policyName) != nil || g.srv.CountCalls(iamtest.MethodCreatePolicy) != 0 {
				t.Fatal("a policy was created without the opt-in")
			}

			g = newRig(t, tr, nil, deny.CreateIfAbsent())
			p, err := g.u.Update(ctx, policyName, deny.RemoveRule(rule(1)))
			if p != nil || err != nil || g.srv.CountCalls(iamtest.MethodCreatePolicy) != 0 {
				t.Fatalf("removing from an absent policy: %v, %v; want nil, nil and nothing created", p, err)
			}
			g.srv.SetDenyOperationDelay(10 * time.Second)
			p, err = g.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if err != nil {
				t.Fatal(err)
			}
			if p.GetName() == "" || g.count(rule(1)) != 1 || len(p.GetRules()) != 1 {
				t.Fatalf("created %v", p)
			}
			if _, err := g.u.Update(ctx, policyName, deny.AddRule(rule(2))); err != nil {
				t.Fatal(err)
			}
			if g.count(rule(2)) != 1 || g.srv.CountCalls(iamtest.MethodCreatePolicy) != 1 {
				t.Fatal("the second change did not update the policy created")
			}
		})
	}
}

// TestConcurrentCreates: writers that all find the policy absent race to
// create it; the losers' ALREADY_EXISTS (over REST a 409 that gax reports
// as ABORTED, its body saying ALREADY_EXISTS; at the call or, for a create
// still pending, in the operation) is a conflict, and they update the
// policy the winner made: every rule lands once.
func TestConcurrentCreates(t *testing.T) {
	for _, tr := range transports {
		for _, delay := range []time.Duration{0, 5 * time.Second} {
			t.Run(tr+"/"+delay.String(), func(t *testing.T) {
				g := newRig(t, tr, nil, deny.CreateIfAbsent())
				g.srv.SetDenyOperationDelay(delay)
				const n = 6
				errs := make([]error, n)
				g.clock.Go(context.Background(), n, func(ctx context.Context, i int) {
					_, errs[i-1] = g.u.Update(ctx, policyName, deny.AddRule(rule(i)))
				})
				for i, err := range errs {
					if err != nil {
						t.Errorf("writer %d: %v", i+1, err)
					}
				}
				for i := 1; i <= n; i++ {
					if c := g.count(rule(i)); c != 1 {
						t.Errorf("rule %d in the policy %d times", i, c)
					}
				}
				if c := g.applied(iamtest.MethodCreatePolicy); c < 1 {
					t.Errorf("%d creates applied", c)
				}
				refused := 0
				for _, c := range g.srv.Calls() {
					if c.Method == iamtest.MethodCreatePolicy && c.Code == grpccodes.AlreadyExists {
						refused++
					}
				}
				if delay == 0 && refused == 0 {
					t.Error("no create lost the race: the test proves nothing")
				}
			})
		}
	}
}
