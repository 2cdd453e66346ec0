package iamtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
)

// Issue 31, item 2: the limits of custom roles, on the gRPC face
// (admin.NewIamClient) and the REST one (iam/v1). Source:
// https://cloud.google.com/iam/quotas ("Custom roles": 300 per project and
// per organization, a description of up to 300 bytes, 64 KB of title,
// description and permissions); a deleted role counts until it is purged
// (https://cloud.google.com/iam/docs/creating-custom-roles: a deleted role
// stays for 7 days, then is purged).
func TestCustomRoleLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := iam.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	create := func(parent, id string, r *adminpb.Role) (*adminpb.Role, error) {
		return c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: parent, RoleId: id, Role: r}, noRetry)
	}
	role := func(desc string, perms ...string) *adminpb.Role {
		return &adminpb.Role{Title: "t", Description: desc, IncludedPermissions: perms}
	}

	// Descriptions of 300 bytes pass, 301 do not.
	if _, err := create("projects/p", "desc300", role(strings.Repeat("d", 300), "iam.roles.get")); err != nil {
		t.Fatalf("a 300-byte description: %v", err)
	}
	_, err = create("projects/p", "desc301", role(strings.Repeat("d", 301), "iam.roles.get"))
	wantStatus(t, err, codes.InvalidArgument, "The description length (301) is longer than the maximum allowed length 300.")

	// 64 KB of title, description and permissions, then one byte more.
	perms := func(size int) []string { // distinct permissions of 32 bytes, then one to fill
		var ps []string
		for i := 0; size >= 32; i++ {
			ps = append(ps, fmt.Sprintf("svc.things.verb%017d", i))
			size -= 32
		}
		if size > 0 {
			ps = append(ps, "a.b."+strings.Repeat("c", size-4))
		}
		return ps
	}
	if _, err := create("projects/p", "big", role("", perms(64<<10-1)...)); err != nil {
		t.Fatalf("64 KB of role: %v", err)
	}
	_, err = create("projects/p", "toobig", role("", perms(64<<10)...))
	wantStatus(t, err, codes.InvalidArgument, "The role's title, description and permissions take 65537 bytes, more than the maximum of 65536 (64 KB).")

	// resourcemanager.projects.list has no place in a project's role; an
	// organization's role may hold it.
	_, err = create("projects/p", "lister", role("", "resourcemanager.projects.list"))
	wantStatus(t, err, codes.InvalidArgument, "Permission resourcemanager.projects.list is not valid: it is not supported in project-level custom roles.")
	_, err = svc.Projects.Roles.Create("projects/p", &iam.CreateRoleRequest{RoleId: "lister",
		Role: &iam.Role{Title: "t", IncludedPermissions: []string{"resourcemanager.projects.list"}}}).Do()
	wantHTTP(t, "a project role with resourcemanager.projects.list", err, http.StatusBadRequest, "not supported in project-level custom roles")
	if _, err := create("organizations/1", "lister", role("", "resourcemanager.projects.list")); err != nil {
		t.Fatalf("an organization's role with resourcemanager.projects.list: %v", err)
	}
	desc300, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/p/roles/desc300"}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	upd := role("", "resourcemanager.projects.list")
	upd.Etag = desc300.Etag
	_, err = c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: desc300.Name,
		Role: upd, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"included_permissions"}}}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, "")

	// 300 roles per project, deleted ones counted: two are there already.
	for i := range iamtest.MaxCustomRolesPerParent - 2 {
		if _, err := create("projects/p", fmt.Sprintf("r%03d", i), role("", "iam.roles.get")); err != nil {
			t.Fatalf("role %d: %v", i+3, err)
		}
	}
	if _, err := c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: "projects/p/roles/r000"}, noRetry); err != nil {
		t.Fatal(err)
	}
	const full = "The maximum number of custom roles (300) in projects/p has been reached."
	_, err = create("projects/p", "one_more", role("", "iam.roles.get"))
	wantStatus(t, err, codes.FailedPrecondition, full)
	_, err = svc.Projects.Roles.Create("projects/p", &iam.CreateRoleRequest{RoleId: "one_more",
		Role: &iam.Role{Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}).Do()
	wantHTTP(t, "role 301", err, http.StatusBadRequest, full)
	if _, err := create("projects/q", "elsewhere", role("", "iam.roles.get")); err != nil {
		t.Fatalf("another project's roles: %v", err)
	}
}
