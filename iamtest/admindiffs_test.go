package iamtest_test

import (
	"context"
	"net/http"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// Issue 31, item 1: UndeleteServiceAccount of a unique ID no account has
// answers PERMISSION_DENIED (403), on the gRPC face (admin.NewIamClient) and
// the REST one (iam/v1). Source: gcloud's reference for `gcloud iam
// service-accounts undelete`: "If the service account does not exist, this
// command returns a PERMISSION_DENIED error."
func TestUndeleteUnknownAccountIsPermissionDenied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := iam.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	const name = "projects/-/serviceAccounts/123456789012345678901"
	_, err = c.admin.UndeleteServiceAccount(ctx, &adminpb.UndeleteServiceAccountRequest{Name: name}, noRetry)
	wantStatus(t, err, codes.PermissionDenied, "Permission 'iam.serviceAccounts.undelete' denied on resource '"+name+"' (or it may not exist).")
	if reasonOf(err) != iamtest.ReasonPermissionDenied {
		t.Fatalf("reason %q", reasonOf(err))
	}
	_, err = svc.Projects.ServiceAccounts.Undelete(name, &iam.UndeleteServiceAccountRequest{}).Do()
	wantHTTP(t, "undelete", err, http.StatusForbidden, "iam.serviceAccounts.undelete")
}

// Issue 31, item 1: UpdateServiceAccount changes display_name only; the
// description it carries is ignored (PatchServiceAccount changes it).
// Source: google/iam/admin/v1/iam.proto, UpdateServiceAccount: "You can
// update only the `display_name` field."
func TestUpdateServiceAccountChangesDisplayNameOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa, err := c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "update-robot",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "before", Description: "kept"}}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.admin.UpdateServiceAccount(ctx, &adminpb.ServiceAccount{Name: sa.Name, DisplayName: "after", Description: "ignored"}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if got.DisplayName != "after" || got.Description != "kept" {
		t.Fatalf("after UpdateServiceAccount: display %q, description %q; want \"after\", \"kept\"", got.DisplayName, got.Description)
	}
	if stored := srv.ServiceAccount(sa.Name); stored.Description != "kept" {
		t.Fatalf("stored description %q", stored.Description)
	}
}

// Issue 31, item 1: CreateRole refuses a role that names itself ("Must not
// specify role.name.": IAM names a role from parent and role_id) and a
// role_id whose role is deleted and not yet purged (FAILED_PRECONDITION
// "You can't create a role_id (ID) which has been marked for deletion."), on
// both faces. Sources: https://cloud.google.com/iam/docs/creating-custom-roles
// (a deleted role's ID cannot be reused until it is purged) and the words of
// IAM's answers recorded in issue 31's audit.
func TestCreateRoleRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := iam.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "named",
		Role: &adminpb.Role{Name: "projects/p/roles/named", Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, "Must not specify role.name.")
	_, err = svc.Projects.Roles.Create("projects/p", &iam.CreateRoleRequest{RoleId: "named",
		Role: &iam.Role{Name: "projects/p/roles/named", Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}).Do()
	wantHTTP(t, "create with role.name", err, http.StatusBadRequest, "Must not specify role.name.")

	r, err := c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "gone",
		Role: &adminpb.Role{Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: r.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	const msg = "You can't create a role_id (gone) which has been marked for deletion."
	_, err = c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "gone",
		Role: &adminpb.Role{Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}, noRetry)
	wantStatus(t, err, codes.FailedPrecondition, msg)
	_, err = svc.Projects.Roles.Create("projects/p", &iam.CreateRoleRequest{RoleId: "gone",
		Role: &iam.Role{Title: "t", IncludedPermissions: []string{"iam.roles.get"}}}).Do()
	wantHTTP(t, "create over a deleted role", err, http.StatusBadRequest, msg)
}

// Issue 31, item 1: SetKeyCreationDisabled (the organization policy
// constraint iam.disableServiceAccountKeyCreation) blocks
// CreateServiceAccountKey, not UploadServiceAccountKey, which IAM governs by
// a constraint of its own, iam.disableServiceAccountKeyUpload. Source:
// https://cloud.google.com/resource-manager/docs/organization-policy/restricting-service-accounts
// (the two constraints, each naming the method it blocks).
func TestKeyCreationDisabledLeavesUploads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := srv.SeedServiceAccount("p", "upload-robot")
	srv.SetKeyCreationDisabled(true)
	_, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry)
	wantStatus(t, err, codes.FailedPrecondition, "Key creation is not allowed on this service account.")
	if _, err := c.admin.UploadServiceAccountKey(ctx, &adminpb.UploadServiceAccountKeyRequest{Name: sa.Name,
		PublicKeyData: selfSignedPEM(t, true)}, noRetry); err != nil {
		t.Fatalf("an upload while key creation is disabled: %v", err)
	}
}
