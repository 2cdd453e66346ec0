package deny_test

import (
	"context"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestLostCreateAppliesOnce: CreatePolicy commits and its answer is lost
// (UNAVAILABLE); the rerun reads the policy made, finds the rule there and
// writes nothing more: one create applied, no update, the rule once. The
// same with the create's operation pending and its poll failing.
func TestLostCreateAppliesOnce(t *testing.T) {
	for _, tr := range transports {
		for _, delay := range []time.Duration{0, 3 * time.Second} {
			t.Run(tr+"/"+delay.String(), func(t *testing.T) {
				e := newEnv(t, tr, nil, deny.CreateIfAbsent())
				e.srv.SetDenyOperationDelay(delay)
				if delay == 0 {
					e.srv.LoseNextAnswers(iamtest.MethodCreatePolicy, 1)
				} else {
					e.srv.FailNext(iamtest.MethodGetOperation, 1, grpccodes.Unavailable)
				}
				p, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1)))
				if err != nil {
					t.Fatal(err)
				}
				if e.count(rule(1)) != 1 || len(p.GetRules()) != 1 {
					t.Fatalf("rule %d times; answered %v", e.count(rule(1)), p)
				}
				if a := e.applied(iamtest.MethodCreatePolicy); a != 1 {
					t.Fatalf("%d creates applied, want 1", a)
				}
				if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); delay == 0 && n != 0 {
					t.Fatalf("%d UpdatePolicy calls after a lost create, want none", n)
				}
			})
		}
	}
}
