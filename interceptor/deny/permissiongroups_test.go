package deny_test

import (
	"context"
	"testing"

	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestPermissionGroups: permission groups, every permission of a service
// (SERVICE_FQDN/*.*) or of a resource type (SERVICE_FQDN/RESOURCE.*), as
// the "Permission groups" section of
// https://cloud.google.com/iam/docs/deny-overview#permission-groups lists
// them, pass the Updater's checks and the fake's, on both faces, as denied
// and exception permissions.
func TestPermissionGroups(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		e := newEnv(t, tr, nil)
		e.seed(rule(0))
		r := deny.Rule{
			DeniedPrincipals:     []string{deny.PublicAll},
			DeniedPermissions:    []string{"iam.googleapis.com/*.*", "cloudresourcemanager.googleapis.com/projects.*"},
			ExceptionPermissions: []string{"iam.googleapis.com/roles.*"},
		}
		if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(r)); err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if n := e.count(r); n != 1 {
			t.Fatalf("%s: %d rules stored, want 1", tr, n)
		}
	}
}
