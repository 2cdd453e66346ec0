package role_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestMalformedNamesRefusedBeforeAnyCall: Update promises that a malformed
// name is refused INVALID_ARGUMENT before any call. A role ID is letters,
// digits, underscores and periods (at most 64); a project or organization
// ID holds no white space, '?', '#' or '%' (a name IAM would refuse, or
// that a REST path would read otherwise).
func TestMalformedNamesRefusedBeforeAnyCall(t *testing.T) {
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	u := e.updater(t, e.admin)
	for _, name := range []string{
		roleName + "?x=y", roleName + "#f", roleName + "%3F", "projects/p/roles/dep loyer", "projects/p/roles/dep-loyer",
		"projects/p/roles/" + strings.Repeat("a", 65), "projects/p q/roles/deployer", "projects/p?q/roles/deployer",
		"organizations/1#/roles/deployer", " projects/p/roles/deployer", roleName + "\n",
	} {
		_, err := u.Update(context.Background(), name, role.SetTitle("x"))
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "custom role") {
			t.Errorf("name %q: %v, want INVALID_ARGUMENT naming the form", name, err)
		}
	}
	if n := e.srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Fatalf("%d calls made for malformed names, want none", n)
	}
	for _, name := range []string{"projects/google.com:my-project/roles/deployer_v2.x", "organizations/123/roles/Deployer", "projects/p/roles/" + strings.Repeat("a", 64)} {
		_, err := u.Update(context.Background(), name, role.SetTitle("x"))
		if status.Code(err) == codes.InvalidArgument && strings.Contains(err.Error(), "is not a custom role's name") {
			t.Errorf("well-formed name %q refused: %v", name, err)
		}
	}
}
