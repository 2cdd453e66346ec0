package role_test

import (
	"context"
	"slices"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/interceptor/role"
)

// TestOrganizationRole: an organization's custom role is read and written
// through both clients (the discovery client's organizations.roles), with
// the same result.
func TestOrganizationRole(t *testing.T) {
	const name = "organizations/123456/roles/auditor"
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			if _, err := e.admin.CreateRole(context.Background(), &adminpb.CreateRoleRequest{
				Parent: "organizations/123456", RoleId: "auditor",
				Role: &adminpb.Role{Title: "Auditor", IncludedPermissions: []string{"iam.roles.get"}},
			}); err != nil {
				t.Fatal(err)
			}
			got, err := e.updater(t, k.client(e)).Update(context.Background(), name, role.AddPermissions("iam.roles.list"), role.SetStage(adminpb.Role_GA))
			if err != nil {
				t.Fatal(err)
			}
			stored := e.srv.CustomRole(name)
			if want := []string{"iam.roles.get", "iam.roles.list"}; !slices.Equal(stored.GetIncludedPermissions(), want) || stored.GetStage() != adminpb.Role_GA || got.GetName() != name {
				t.Fatalf("stored %v, answered %v", stored, got)
			}
		})
	}
}
