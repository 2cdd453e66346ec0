package deny_test

import (
	"context"
	"fmt"

	iampb "cloud.google.com/go/iam/apiv2/iampb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// RemoveRule removes a rule equal to the one given (lists compared as
// sets); RuleOf reads the rules of a policy back as Rules, for a rule built
// from what is there. Removing a rule that is not there writes nothing.
func ExampleRemoveRule() {
	srv, u, closeAll := exampleServer()
	defer closeAll()
	const name = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/guardrails"
	keys := deny.Rule{
		DeniedPrincipals:  []string{deny.PublicAll},
		DeniedPermissions: []string{"iam.googleapis.com/serviceAccountKeys.create"},
	}
	roles := deny.Rule{
		DeniedPrincipals:  []string{"principalSet://goog/group/contractors@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
	}
	srv.SeedDenyPolicy(name, &iampb.Policy{DisplayName: "guardrails"})
	if _, err := u.Update(context.Background(), name, deny.AddRule(keys), deny.AddRule(roles)); err != nil {
		fmt.Println(err)
		return
	}
	p, err := u.Update(context.Background(), name, deny.RemoveRule(keys))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, pr := range p.GetRules() {
		if r, ok := deny.RuleOf(pr); ok {
			fmt.Println(r.DeniedPrincipals, r.DeniedPermissions)
		}
	}
	before := srv.CountCalls(iamtest.MethodUpdatePolicy)
	if _, err := u.Update(context.Background(), name, deny.RemoveRule(keys)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("writes for removing it again:", srv.CountCalls(iamtest.MethodUpdatePolicy)-before)
	// Output:
	// [principalSet://goog/group/contractors@example.com] [iam.googleapis.com/roles.delete]
	// writes for removing it again: 0
}
