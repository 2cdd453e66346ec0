package deny_test

import (
	"context"
	"testing"
	"time"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestDeletedMeanwhileOverBothTransports: with CreateIfAbsent, a policy
// deleted between the read and the update is recreated holding the rule,
// over REST as over gRPC (a 404 from UpdatePolicy is the same conflict as
// gRPC's NOT_FOUND), with its operation pending or not; the rule lands
// once and the old rules do not come back.
func TestDeletedMeanwhileOverBothTransports(t *testing.T) {
	for _, tr := range transports {
		for _, delay := range []time.Duration{0, 3 * time.Second} {
			t.Run(tr+"/"+delay.String(), func(t *testing.T) {
				e := newEnv(t, tr, nil)
				e.seed(rule(0))
				e.srv.SetDenyOperationDelay(delay)
				u, err := deny.NewUpdater(&deletingClient{Client: e.c, srv: e.srv}, e.r, deny.CreateIfAbsent())
				if err != nil {
					t.Fatal(err)
				}
				p, err := u.Update(context.Background(), policyName, deny.AddRule(rule(1)))
				if err != nil {
					t.Fatal(err)
				}
				if e.count(rule(1)) != 1 || e.count(rule(0)) != 0 || len(p.GetRules()) != 1 {
					t.Fatalf("stored %v, answered %v; want the new policy holding rule 1 alone", e.srv.DenyPolicy(policyName), p)
				}
				if a := e.applied(iamtest.MethodCreatePolicy); a != 1 {
					t.Fatalf("%d creates applied, want 1", a)
				}
			})
		}
	}
}
