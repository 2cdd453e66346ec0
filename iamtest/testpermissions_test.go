package iamtest_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// TestTestIamPermissionsSubset: TestIamPermissions answers the subset the
// caller holds ("A subset of TestPermissionsRequest.permissions that the
// caller is allowed", google/iam/v1/iam_policy.proto), set by
// SetCallerPermissions, and the empty set for a resource that does not
// exist ("If the resource does not exist, this will return an empty set of
// permissions, not a NOT_FOUND error"), over gRPC and REST.
func TestTestIamPermissionsSubset(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	asked := []string{"resourcemanager.projects.get", "resourcemanager.projects.delete", "iam.roles.list"}
	test := func(resource string) []string {
		t.Helper()
		resp, err := c.policy.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: resource, Permissions: asked}, noRetry)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Permissions
	}
	if got := test("projects/p"); !slices.Equal(got, asked) {
		t.Fatalf("default: %v, want all", got)
	}
	srv.SetCallerPermissions("projects/p", "resourcemanager.projects.get", "iam.roles.list")
	if got := test("projects/p"); !slices.Equal(got, []string{"resourcemanager.projects.get", "iam.roles.list"}) {
		t.Fatalf("subset: %v", got)
	}
	svc := newIAMREST(t, srv)
	sa := srv.SeedServiceAccount("p", "robot-one")
	srv.SetCallerPermissions(sa.Name)
	r, err := svc.Projects.ServiceAccounts.TestIamPermissions(sa.Name, &iamv1.TestIamPermissionsRequest{Permissions: []string{"iam.serviceAccounts.actAs"}}).Do()
	if err != nil || len(r.Permissions) != 0 {
		t.Fatalf("holds none: %v, %v", r, err)
	}
	srv.ResetCallerPermissions(sa.Name)
	r, err = svc.Projects.ServiceAccounts.TestIamPermissions(sa.Name, &iamv1.TestIamPermissionsRequest{Permissions: []string{"iam.serviceAccounts.actAs"}}).Do()
	if err != nil || len(r.Permissions) != 1 {
		t.Fatalf("reset: %v, %v", r, err)
	}
	missing := "projects/p/serviceAccounts/nobody-here@p.iam.gserviceaccount.com"
	r, err = svc.Projects.ServiceAccounts.TestIamPermissions(missing, &iamv1.TestIamPermissionsRequest{Permissions: []string{"iam.serviceAccounts.actAs"}}).Do()
	if err != nil || len(r.Permissions) != 0 {
		t.Fatalf("a missing account: %v, %v; want the empty set", r, err)
	}
	if msg := panicMessage(func() { srv.SetCallerPermissions("projects/p", "owner") }); !strings.Contains(msg, `"owner"`) {
		t.Fatalf("bad permission panicked with %q", msg)
	}
}

// TestOrganizationPermissionsOnProject (issue 31, item 2): a permission
// granted only on an organization (resourcemanager.projects.list, .create)
// tested on a project is refused 400 INVALID_ARGUMENT
// (https://github.com/googleapis/google-cloud-java/issues/722: "using
// resourcemanager.projects.create or resourcemanager.projects.list in a
// testPermissions call leads to a 400 Bad Request error"; IAM's words are not
// public, the fake's are those of a project role holding it, "Permission
// resourcemanager.projects.list is not valid."); on an organization it is
// answered. Faces: Resource Manager v3 over gRPC (resourcemanager.NewProjectsClient)
// and REST (cloudresourcemanager/v3), and IAMPolicy over gRPC.
func TestOrganizationPermissionsOnProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	rc, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	rest, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	asked := []string{"resourcemanager.projects.get", "resourcemanager.projects.list"}
	const msg = "Permission resourcemanager.projects.list is not valid."
	_, err = rc.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: asked})
	wantStatus(t, err, codes.InvalidArgument, msg)
	_, err = c.policy.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: asked}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	_, err = rest.Projects.TestIamPermissions("projects/p", &crm.TestIamPermissionsRequest{Permissions: asked}).Do()
	wantHTTP(t, "projects.testIamPermissions", err, http.StatusBadRequest, msg)
	_, err = rc.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: []string{"resourcemanager.projects.create"}})
	wantStatus(t, err, codes.InvalidArgument, "Permission resourcemanager.projects.create is not valid.")

	// Project permissions alone are answered; on an organization, list is.
	if r, err := rc.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: asked[:1]}); err != nil || len(r.Permissions) != 1 {
		t.Fatalf("projects/p: %v, %v", r, err)
	}
	oc, err := resourcemanager.NewOrganizationsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = oc.Close() })
	if r, err := oc.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "organizations/123", Permissions: asked}); err != nil || len(r.Permissions) != 2 {
		t.Fatalf("organizations/123: %v, %v", r, err)
	}
}
