package iamtest_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
)

// wantErr fails t unless err has code and a message containing msg.
func wantErr(t *testing.T, what string, err error, code codes.Code, msg string) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), msg) {
		t.Fatalf("%s: got %v, want %v with %q", what, err, code, msg)
	}
}

// roleNames returns the names of roles.
func roleNames(roles []*adminpb.Role) []string {
	var out []string
	for _, r := range roles {
		out = append(out, r.Name)
	}
	return out
}

// TestCustomRoleLifeCycleGRPC drives a custom role through create, read,
// read-modify-write, soft delete, undelete and purge with admin.NewIamClient.
// Sources: google/iam/admin/v1/iam.proto (CreateRoleRequest.role_id, Role.etag
// "Used to perform a consistent read-modify-write", Role.deleted,
// UpdateRoleRequest.update_mask, ListRolesRequest.show_deleted and view);
// https://cloud.google.com/iam/docs/creating-custom-roles (role ID rule,
// "You can undelete a role within 7 days", "its bindings remain, but are
// inactive"); the messages "You can't delete role_id (NAME) as it is already
// deleted." (users quote it, issue 22) and "You can't create a role_id (ID)
// which has been marked for deletion." (issue 31's audit).
func TestCustomRoleLifeCycleGRPC(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	ctx := context.Background()
	const name = "projects/p/roles/deployer.v1"

	create := func(parent, id string) (*adminpb.Role, error) {
		return c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: parent, RoleId: id, Role: &adminpb.Role{
			Title: "Deployer", IncludedPermissions: []string{"run.services.update", "iam.serviceAccounts.actAs"}}}, noRetry)
	}
	r, err := create("projects/p", "deployer.v1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != name || r.Deleted || len(r.Etag) == 0 || len(r.IncludedPermissions) != 2 {
		t.Fatalf("created %v", r)
	}
	_, err = create("projects/p", "deployer.v1")
	wantErr(t, "create again", err, codes.AlreadyExists, "deployer.v1")
	for _, id := range []string{"ab", "has-hyphen", strings.Repeat("x", 65), ""} {
		_, err = create("projects/p", id)
		wantErr(t, "role_id "+id, err, codes.InvalidArgument, "role_id")
	}
	if _, err := create("organizations/123", "orgRole"); err != nil {
		t.Fatalf("organization role: %v", err)
	}

	// Read-modify-write: the etag moves on every write; a stale one is ABORTED.
	got, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry)
	if err != nil || !bytes.Equal(got.Etag, r.Etag) || len(got.IncludedPermissions) != 2 {
		t.Fatalf("GetRole: %v, %v", got, err)
	}
	upd, err := c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name,
		Role:       &adminpb.Role{Title: "Deployer 2", Etag: got.Etag},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if upd.Title != "Deployer 2" || len(upd.IncludedPermissions) != 2 || bytes.Equal(upd.Etag, got.Etag) {
		t.Fatalf("updated %v: the mask names the title only, and the etag must move", upd)
	}
	_, err = c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name,
		Role: &adminpb.Role{Title: "lost update", Etag: got.Etag}}, noRetry)
	wantErr(t, "update with a stale etag", err, codes.Aborted, "")
	_, err = c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: name, Etag: got.Etag}, noRetry)
	wantErr(t, "delete with a stale etag", err, codes.Aborted, "")
	_, err = c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name, Role: &adminpb.Role{},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}}}, noRetry)
	wantErr(t, "update_mask name", err, codes.InvalidArgument, "update_mask")

	// Bound before deletion: the binding stays, but cannot be made anew.
	if err := c.grant("projects/p", name, "user:a@example.com"); err != nil {
		t.Fatal(err)
	}

	del, err := c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: name, Etag: upd.Etag}, noRetry)
	if err != nil || !del.Deleted {
		t.Fatalf("DeleteRole: %v, %v", del, err)
	}
	if got, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry); err != nil || !got.Deleted {
		t.Fatalf("a deleted role stays gettable with deleted true: %v, %v", got, err)
	}
	_, err = c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: name}, noRetry)
	wantErr(t, "delete again", err, codes.FailedPrecondition, "You can't delete role_id ("+name+") as it is already deleted.")
	_, err = create("projects/p", "deployer.v1")
	wantErr(t, "create over a deleted role", err, codes.FailedPrecondition,
		"You can't create a role_id (deployer.v1) which has been marked for deletion.")
	list := func(show bool) []string {
		resp, err := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{Parent: "projects/p", ShowDeleted: show}, noRetry)
		if err != nil {
			t.Fatal(err)
		}
		return roleNames(resp.Roles)
	}
	if l := list(false); len(l) != 0 {
		t.Fatalf("deleted role listed without show_deleted: %v", l)
	}
	if l := list(true); !slices.Equal(l, []string{name}) {
		t.Fatalf("show_deleted listed %v", l)
	}
	if got := c.members(t, "projects/p", name); !slices.Equal(got, []string{"user:a@example.com"}) {
		t.Fatalf("the binding of the deleted role is %v, want kept", got)
	}
	err = c.grant("projects/q", name, "user:b@example.com")
	wantErr(t, "granting a deleted role", err, codes.InvalidArgument, name)
	err = c.grant("projects/p", name, "user:b@example.com")
	wantErr(t, "granting a deleted role to one more member", err, codes.InvalidArgument, name)
	if err := c.grant("projects/p", "roles/viewer", "user:c@example.com"); err != nil {
		t.Fatalf("a policy that keeps the deleted role's binding must stay writable: %v", err)
	}

	// Undelete within the window.
	und, err := c.admin.UndeleteRole(ctx, &adminpb.UndeleteRoleRequest{Name: name}, noRetry)
	if err != nil || und.Deleted || bytes.Equal(und.Etag, del.Etag) {
		t.Fatalf("UndeleteRole: %v, %v", und, err)
	}

	// Deleted again and left past the 7 days: purged.
	if _, err := c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: name}, noRetry); err != nil {
		t.Fatal(err)
	}
	clock.Advance(iamtest.RoleUndeleteWindow - time.Second)
	if srv.CustomRole(name) == nil {
		t.Fatal("purged before the window ended")
	}
	clock.Advance(time.Second)
	_, err = c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry)
	wantErr(t, "get a purged role", err, codes.NotFound, name)
	_, err = c.admin.UndeleteRole(ctx, &adminpb.UndeleteRoleRequest{Name: name}, noRetry)
	wantErr(t, "undelete a purged role", err, codes.NotFound, "")
	if l := list(true); len(l) != 0 {
		t.Fatalf("purged role listed: %v", l)
	}
	if got := c.members(t, "projects/p", name); got != nil {
		t.Fatalf("the purged role's binding is still there: %v", got)
	}
	_, err = create("projects/p", "deployer.v1")
	wantErr(t, "create during the permanent deletion", err, codes.FailedPrecondition, "marked for deletion")
	clock.Advance(iamtest.RolePurgeWindow)
	if _, err := create("projects/p", "deployer.v1"); err != nil {
		t.Fatalf("the ID is free again after the purge: %v", err)
	}
}

// TestPredefinedRolesGRPC: predefined roles are gettable and listed, never
// changed (UpdateRoleRequest.name and DeleteRoleRequest.name: "This method
// updates only custom roles").
func TestPredefinedRolesGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	if r, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/viewer"}, noRetry); err != nil || len(r.IncludedPermissions) == 0 {
		t.Fatalf("GetRole roles/viewer: %v, %v", r, err)
	}
	_, err := c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: "roles/viewer", Role: &adminpb.Role{Title: "x"}}, noRetry)
	wantErr(t, "update roles/viewer", err, codes.InvalidArgument, "custom roles")
	_, err = c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: "roles/viewer"}, noRetry)
	wantErr(t, "delete roles/viewer", err, codes.InvalidArgument, "custom roles")
	_, err = c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/p/roles/none"}, noRetry)
	wantErr(t, "get a missing custom role", err, codes.NotFound, "projects/p/roles/none")
}

// TestCustomRoleListPagingGRPC: ListRoles pages custom roles in name order,
// BASIC view (the default) without permissions, FULL with them
// (ListRolesRequest.view).
func TestCustomRoleListPagingGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	for _, id := range []string{"r_c", "r_a", "r_b"} {
		if _, err := c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: id,
			Role: &adminpb.Role{IncludedPermissions: []string{"storage.objects.get"}}}, noRetry); err != nil {
			t.Fatal(err)
		}
	}
	p1, err := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{Parent: "projects/p", PageSize: 2}, noRetry)
	if err != nil || p1.NextPageToken == "" || len(p1.Roles[0].IncludedPermissions) != 0 {
		t.Fatalf("page 1: %v, %v", p1, err)
	}
	p2, err := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{Parent: "projects/p", PageSize: 2, PageToken: p1.NextPageToken, View: adminpb.RoleView_FULL}, noRetry)
	if err != nil || p2.NextPageToken != "" || len(p2.Roles[0].IncludedPermissions) != 1 {
		t.Fatalf("page 2: %v, %v", p2, err)
	}
	all := append(roleNames(p1.Roles), roleNames(p2.Roles)...)
	if !slices.Equal(all, []string{"projects/p/roles/r_a", "projects/p/roles/r_b", "projects/p/roles/r_c"}) {
		t.Fatalf("listed %v", all)
	}
	if other, _ := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{Parent: "projects/q"}, noRetry); len(other.GetRoles()) != 0 {
		t.Fatalf("another project lists %v", roleNames(other.GetRoles()))
	}
	// Granting a live custom role is allowed, also with SetKnownRolesOnly.
	srv.SetKnownRolesOnly(true)
	if err := c.grant("projects/p", "projects/p/roles/r_a", "user:a@example.com"); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentWriteNextOnUpdateRole: an interleaved writer moves a custom
// role's etag before the next UpdateRole, which a write carrying the etag
// it read fails ABORTED; a blind write (no etag) and a fresh read's etag
// succeed.
func TestConcurrentWriteNextOnUpdateRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	r, err := c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "deployer",
		Role: &adminpb.Role{Title: "Deployer", IncludedPermissions: []string{"iam.roles.get"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.ConcurrentWriteNext(iamtest.MethodUpdateRole, 1)
	_, err = c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: r.Name, Role: &adminpb.Role{Title: "v2", Etag: r.Etag}}, noRetry)
	if status.Code(err) != codes.Aborted {
		t.Fatalf("UpdateRole after an interleaved write: %v, want ABORTED", err)
	}
	fresh, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: r.Name})
	if err != nil || string(fresh.Etag) == string(r.Etag) || fresh.Title != "Deployer" {
		t.Fatalf("after the interleaved write: %v, %v; want a new etag, the role unchanged", fresh, err)
	}
	if _, err := c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: r.Name, Role: &adminpb.Role{Title: "v2", Etag: fresh.Etag}}, noRetry); err != nil {
		t.Fatal(err)
	}
}
