package deny_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
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
			e := newEnv(t, tr, nil)
			ctx := context.Background()
			_, err := e.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if status.Code(err) != grpccodes.NotFound {
				t.Fatalf("without CreateIfAbsent: %v, want NOT_FOUND", err)
			}
			if e.srv.DenyPolicy(policyName) != nil || e.srv.CountCalls(iamtest.MethodCreatePolicy) != 0 {
				t.Fatal("a policy was created without the opt-in")
			}

			e = newEnv(t, tr, nil, deny.CreateIfAbsent())
			p, err := e.u.Update(ctx, policyName, deny.RemoveRule(rule(1)))
			if p != nil || err != nil || e.srv.CountCalls(iamtest.MethodCreatePolicy) != 0 {
				t.Fatalf("removing from an absent policy: %v, %v; want nil, nil and nothing created", p, err)
			}
			e.srv.SetDenyOperationDelay(10 * time.Second)
			p, err = e.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if err != nil {
				t.Fatal(err)
			}
			if p.GetName() == "" || e.count(rule(1)) != 1 || len(p.GetRules()) != 1 {
				t.Fatalf("created %v", p)
			}
			if _, err := e.u.Update(ctx, policyName, deny.AddRule(rule(2))); err != nil {
				t.Fatal(err)
			}
			if e.count(rule(2)) != 1 || e.srv.CountCalls(iamtest.MethodCreatePolicy) != 1 {
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
				e := newEnv(t, tr, nil, deny.CreateIfAbsent())
				e.srv.SetDenyOperationDelay(delay)
				// Every writer reads before the first create lands: the
				// clock wakes the readers one by one, and each then sleeps
				// in its create's latency.
				e.srv.SetLatency(iamtest.MethodGetPolicy, 50*time.Millisecond)
				e.srv.SetLatency(iamtest.MethodCreatePolicy, 50*time.Millisecond)
				const n = 6
				errs := make([]error, n)
				// Each writer its own Updater (its own process, in effect):
				// the Updates of one Updater would be coalesced.
				us := make([]*deny.Updater, n)
				for i := range us {
					u, err := deny.NewUpdater(e.c, e.r, deny.CreateIfAbsent())
					if err != nil {
						t.Fatal(err)
					}
					us[i] = u
				}
				e.clock.Go(context.Background(), n, func(ctx context.Context, i int) {
					_, errs[i] = us[i].Update(ctx, policyName, deny.AddRule(rule(i+1)))
				})
				for i, err := range errs {
					if err != nil {
						t.Errorf("writer %d: %v", i+1, err)
					}
				}
				for i := 1; i <= n; i++ {
					if c := e.count(rule(i)); c != 1 {
						t.Errorf("rule %d in the policy %d times", i, c)
					}
				}
				if c := e.applied(iamtest.MethodCreatePolicy); c != 1 {
					t.Errorf("%d creates applied, want 1", c)
				}
				refused := 0
				for _, c := range e.srv.Calls() {
					if c.Method == iamtest.MethodCreatePolicy && c.Code == grpccodes.AlreadyExists {
						refused++
					}
				}
				if refused == 0 {
					t.Error("no create lost the race: the test proves nothing")
				}
			})
		}
	}
}

// deletingClient deletes the policy just before the first UpdatePolicy,
// as a concurrent DeletePolicy between the read and the write would.
type deletingClient struct {
	deny.Client
	srv  *iamtest.Server
	done bool
}

func (c *deletingClient) UpdatePolicy(ctx context.Context, req *iampb.UpdatePolicyRequest, opts ...gax.CallOption) (*iamv2.UpdatePolicyOperation, error) {
	if !c.done {
		c.done = true
		c.srv.SeedDenyPolicy(policyName, nil)
	}
	return c.Client.UpdatePolicy(ctx, req, opts...)
}

// TestCreateIfAbsentPolicyDeletedMeanwhile: with CreateIfAbsent, an update
// of a policy deleted since the read (NOT_FOUND) is a conflict: the rerun
// finds it absent and creates it with the rule. Without the opt-in, the
// NOT_FOUND is returned.
func TestCreateIfAbsentPolicyDeletedMeanwhile(t *testing.T) {
	for _, create := range []bool{true, false} {
		t.Run(fmt.Sprint("create=", create), func(t *testing.T) {
			e := newEnv(t, "grpc", nil)
			e.seed(rule(0))
			var opts []deny.Option
			if create {
				opts = append(opts, deny.CreateIfAbsent())
			}
			u, err := deny.NewUpdater(&deletingClient{Client: e.c, srv: e.srv}, e.r, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = u.Update(context.Background(), policyName, deny.AddRule(rule(1)))
			if !create {
				if status.Code(err) != grpccodes.NotFound {
					t.Fatalf("%v, want NOT_FOUND", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.count(rule(1)) != 1 || e.count(rule(0)) != 0 {
				t.Fatalf("policy %v, want the new one holding rule 1 alone", e.srv.DenyPolicy(policyName))
			}
		})
	}
}

// TestCreateIfAbsentRefusesBadPolicyID: a policy ID CreatePolicy would
// refuse is refused before any call when CreateIfAbsent could create it.
func TestCreateIfAbsentRefusesBadPolicyID(t *testing.T) {
	e := newEnv(t, "grpc", nil, deny.CreateIfAbsent())
	_, err := e.u.Update(context.Background(), "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/Bad_ID", deny.AddRule(rule(1)))
	if status.Code(err) != grpccodes.InvalidArgument || !strings.Contains(err.Error(), "policy ID") {
		t.Fatalf("%v", err)
	}
	if n := e.srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Fatalf("%d calls", n)
	}
}
