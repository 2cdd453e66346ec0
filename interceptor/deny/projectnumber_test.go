package deny_test

import (
	"context"
	"strings"
	"testing"

	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestProjectAnsweredByNumber: IAM answers a deny policy's project by
// number ("Responses always contain the numeric ID",
// google/iam/v2/policy.proto), as the fake does. An Updater asked by
// project ID works on the policy so named, and the name it gets back (by
// number) names the same policy, for CreateIfAbsent's create too.
func TestProjectAnsweredByNumber(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		e := newEnv(t, tr, nil, deny.CreateIfAbsent())
		byNumber := strings.Replace(policyName, "my-project", e.srv.ProjectNumber("my-project"), 1)
		p, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1)))
		if err != nil || p.GetName() != byNumber {
			t.Fatalf("%s: the create: %v, %v; want it named %s", tr, p.GetName(), err, byNumber)
		}
		if _, err := e.u.Update(context.Background(), p.GetName(), deny.AddRule(rule(2))); err != nil {
			t.Fatalf("%s: Update by the name answered: %v", tr, err)
		}
		if _, err := e.u.Update(context.Background(), policyName, deny.RemoveRule(rule(1))); err != nil {
			t.Fatalf("%s: Update by project ID: %v", tr, err)
		}
		if e.count(rule(1)) != 0 || e.count(rule(2)) != 1 {
			t.Fatalf("%s: stored %v", tr, e.srv.DenyPolicy(policyName).GetRules())
		}
	}
}
