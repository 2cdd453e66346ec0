package iamtest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	iamv1 "google.golang.org/api/iam/v1"

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
