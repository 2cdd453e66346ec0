package iamtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// TestGetRoleAnyPredefinedName (issue 31, item 1): IAM holds about two
// thousand predefined roles (https://cloud.google.com/iam/docs/roles-permissions
// lists them), so GetRole answers any well-formed roles/NAME the fake does not
// hold, with no permissions; SetPredefinedRole gives one its permissions, and
// SetKnownRolesOnly makes a name the fake does not know NOT_FOUND ("The role
// named NAME was not found.", as for a custom role). Faces: gRPC
// (admin.NewIamClient) and REST (GET /v1/{name=roles/*}, the HTTP rule of
// GetRole in google/iam/admin/v1/iam.proto).
func TestGetRoleAnyPredefinedName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)

	const name = "roles/storage.objectViewer"
	r, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry)
	if err != nil || r.Name != name || len(r.IncludedPermissions) != 0 || r.Stage != adminpb.Role_GA || len(r.Etag) == 0 {
		t.Fatalf("GetRole %s: %v, %v", name, r, err)
	}
	rr, err := svc.Roles.Get(name).Do()
	if err != nil || rr.Name != name || len(rr.IncludedPermissions) != 0 {
		t.Fatalf("roles.get %s: %v, %v", name, rr, err)
	}
	// A malformed name is still refused.
	_, err = c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/Viewer"}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, "")

	// SetPredefinedRole gives it a title and permissions, on both faces; the
	// role is listed.
	srv.SetPredefinedRole(name, "Storage Object Viewer", "storage.objects.get", "storage.objects.list")
	r, err = c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry)
	if err != nil || r.Title != "Storage Object Viewer" || !slices.Equal(r.IncludedPermissions, []string{"storage.objects.get", "storage.objects.list"}) {
		t.Fatalf("GetRole after SetPredefinedRole: %v, %v", r, err)
	}
	rr, err = svc.Roles.Get(name).Do()
	if err != nil || len(rr.IncludedPermissions) != 2 {
		t.Fatalf("roles.get after SetPredefinedRole: %v, %v", rr, err)
	}
	list, err := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{}, noRetry)
	if err != nil || !slices.Contains(roleNames(list.Roles), name) || !slices.IsSorted(roleNames(list.Roles)) {
		t.Fatalf("ListRoles: %v, %v", roleNames(list.GetRoles()), err)
	}

	// SetKnownRolesOnly: an unknown name is NOT_FOUND; roles given by
	// SetPredefinedRole or AddRoles, and the built-in ones, still answer.
	srv.SetKnownRolesOnly(true)
	const unknown = "roles/compute.admin"
	_, err = c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: unknown}, noRetry)
	wantStatus(t, err, codes.NotFound, "The role named roles/compute.admin was not found.")
	_, err = svc.Roles.Get(unknown).Do()
	wantHTTP(t, "roles.get of an unknown role", err, http.StatusNotFound, "The role named roles/compute.admin was not found.")
	for _, known := range []string{name, "roles/viewer"} {
		if _, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: known}, noRetry); err != nil {
			t.Fatalf("GetRole %s under SetKnownRolesOnly: %v", known, err)
		}
	}
	srv.AddRoles(unknown)
	if r, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: unknown}, noRetry); err != nil || len(r.IncludedPermissions) != 0 {
		t.Fatalf("GetRole of an added role: %v, %v", r, err)
	}
	// A role SetPredefinedRole gave is granted under SetKnownRolesOnly.
	if err := c.grant("projects/p", name, "user:a@example.com"); err != nil {
		t.Fatal(err)
	}
}

// TestSetPredefinedRoleRefusesBadNames: SetPredefinedRole panics on a name
// that is no predefined role, naming it.
func TestSetPredefinedRoleRefusesBadNames(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	for _, bad := range []string{"viewer", "roles/Viewer", "projects/p/roles/mine", "roles/", ""} {
		func() {
			defer func() {
				want := fmt.Sprintf("iamtest: SetPredefinedRole: %q is not a predefined role (roles/NAME)", bad)
				if got := recover(); got != want {
					t.Fatalf("SetPredefinedRole(%q) panicked %v, want %q", bad, got, want)
				}
			}()
			srv.SetPredefinedRole(bad, "t")
		}()
	}
}

// TestRolePageSizes (issue 31, item 1): ListRoles and QueryGrantableRoles
// answer 300 roles a page by default and at most 1,000 (the page_size
// comments of ListRolesRequest and QueryGrantableRolesRequest in
// google/iam/admin/v1/iam.proto: "The default is 300, and the maximum is
// 1,000."); QueryTestablePermissions 100 and 1,000 (its page_size comment).
// The proto does not say whether a larger page_size is refused: the fake
// caps it, as AIP-158 says ("coerced to the maximum"). Faces: gRPC and REST.
func TestRolePageSizes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	for i := range 1100 {
		srv.SetPredefinedRole(fmt.Sprintf("roles/svc.role%04d", i), "t", fmt.Sprintf("svc.things.p%04d", i))
	}
	const full = "//cloudresourcemanager.googleapis.com/projects/p"
	for _, tc := range []struct {
		size int32
		want int
	}{{0, 300}, {500, 500}, {1000, 1000}, {5000, 1000}} {
		l, err := c.admin.ListRoles(ctx, &adminpb.ListRolesRequest{PageSize: tc.size}, noRetry)
		if err != nil || len(l.Roles) != tc.want || l.NextPageToken == "" {
			t.Fatalf("ListRoles page_size %d: %d roles, %v", tc.size, len(l.GetRoles()), err)
		}
		g, err := c.admin.QueryGrantableRoles(ctx, &adminpb.QueryGrantableRolesRequest{FullResourceName: full, PageSize: tc.size}, noRetry)
		if err != nil || len(g.Roles) != tc.want {
			t.Fatalf("QueryGrantableRoles page_size %d: %d roles, %v", tc.size, len(g.GetRoles()), err)
		}
		rl, err := svc.Roles.List().PageSize(int64(tc.size)).Do()
		if err != nil || len(rl.Roles) != tc.want {
			t.Fatalf("roles.list pageSize %d: %d roles, %v", tc.size, len(rl.Roles), err)
		}
	}
	p, err := c.admin.QueryTestablePermissions(ctx, &adminpb.QueryTestablePermissionsRequest{FullResourceName: full}, noRetry)
	if err != nil || len(p.Permissions) != 100 {
		t.Fatalf("QueryTestablePermissions default page: %d, %v", len(p.GetPermissions()), err)
	}
	p, err = c.admin.QueryTestablePermissions(ctx, &adminpb.QueryTestablePermissionsRequest{FullResourceName: full, PageSize: 2000}, noRetry)
	if err != nil || len(p.Permissions) != 1000 {
		t.Fatalf("QueryTestablePermissions page_size 2000: %d, %v", len(p.GetPermissions()), err)
	}
}

// TestMalformedRoleNames (issue 31, item 1): a malformed role name (a role
// ID holding "-", no ID, an unknown parent kind) is refused INVALID_ARGUMENT
// in IAM's words, by GetRole, UpdateRole, DeleteRole and UndeleteRole, and a
// CreateRole role_id that breaks IAM's pattern in its words. Sources: GetRole
// over REST in https://github.com/pulumi/pulumi-gcp/issues/70 and
// https://github.com/GoogleCloudPlatform/k8s-config-connector/issues/210
// (Error 400 'The role name must be in the form ...'), the same issue for
// gcloud iam roles create's role_id message. Faces: gRPC and REST.
func TestMalformedRoleNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	const msg = `The role name must be in the form "roles/{role}", "organizations/{organization_id}/roles/{role}", or "projects/{project_id}/roles/{role}".`
	for _, name := range []string{"projects/p/roles/test-1", "roles/Viewer", "roles/a/b", "folders/f/roles/mine", "projects/-/roles/mine", "viewer"} {
		_, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}, noRetry)
		wantStatus(t, err, codes.InvalidArgument, msg)
		_, err = c.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name, Role: &adminpb.Role{Title: "x"}}, noRetry)
		wantStatus(t, err, codes.InvalidArgument, msg)
		_, err = c.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: name}, noRetry)
		wantStatus(t, err, codes.InvalidArgument, msg)
		_, err = c.admin.UndeleteRole(ctx, &adminpb.UndeleteRoleRequest{Name: name}, noRetry)
		wantStatus(t, err, codes.InvalidArgument, msg)
	}
	_, err := svc.Projects.Roles.Get("projects/p/roles/test-1").Do()
	wantHTTP(t, "projects.roles.get of a malformed name", err, http.StatusBadRequest, msg)
	_, err = svc.Roles.Get("roles/Viewer").Do()
	wantHTTP(t, "roles.get of a malformed name", err, http.StatusBadRequest, msg)

	const idMsg = `The role_id "test-1" is invalid. It doesn't match pattern "[a-zA-Z0-9_\.]{3,64}". ` +
		"The role_id must be 3 to 64 characters long and can be a mix of uppercase and lowercase English letters, digits, underscores and periods."
	_, err = c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "test-1", Role: &adminpb.Role{}}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, idMsg)
	_, err = svc.Projects.Roles.Create("projects/p", &iamv1.CreateRoleRequest{RoleId: "test-1", Role: &iamv1.Role{}}).Do()
	wantHTTP(t, "projects.roles.create with a malformed role_id", err, http.StatusBadRequest, idMsg)
}

// TestTestablePermissionsOnAccount (issue 31, item 1):
// QueryTestablePermissions on a service account
// (//iam.googleapis.com/projects/P/serviceAccounts/A) lists the permissions
// IAM checks on the account (iam.serviceAccounts.*, as
// https://cloud.google.com/iam/docs/roles-permissions/iam lists them, less
// create and list, checked on the project), not the project's. Faces: gRPC
// and REST (POST /v1/permissions:queryTestablePermissions).
func TestTestablePermissionsOnAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	const full = "//iam.googleapis.com/projects/p/serviceAccounts/deployer@p.iam.gserviceaccount.com"
	p, err := c.admin.QueryTestablePermissions(ctx, &adminpb.QueryTestablePermissionsRequest{FullResourceName: full}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, perm := range p.Permissions {
		names = append(names, perm.Name)
	}
	for _, want := range []string{"iam.serviceAccounts.actAs", "iam.serviceAccounts.getIamPolicy", "iam.serviceAccounts.signJwt"} {
		if !slices.Contains(names, want) {
			t.Fatalf("%s missing from %v", want, names)
		}
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "iam.serviceAccounts.") || n == "iam.serviceAccounts.create" || n == "iam.serviceAccounts.list" {
			t.Fatalf("%s is no permission of a service account: %v", n, names)
		}
	}
	r, err := svc.Permissions.QueryTestablePermissions(&iamv1.QueryTestablePermissionsRequest{FullResourceName: full}).Do()
	if err != nil || len(r.Permissions) != len(names) || r.Permissions[0].Name != names[0] {
		t.Fatalf("permissions.queryTestablePermissions: %v, %v", r, err)
	}
	// The project's list still holds project permissions.
	proj, err := c.admin.QueryTestablePermissions(ctx, &adminpb.QueryTestablePermissionsRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p"}, noRetry)
	if err != nil || !slices.ContainsFunc(proj.Permissions, func(p *adminpb.Permission) bool { return p.Name == "resourcemanager.projects.get" }) {
		t.Fatalf("project: %v, %v", proj, err)
	}
}

// TestPredefinedRoleWritesREST (issue 31, item 1): a predefined role cannot
// be changed. Over REST, IAM has no route for it: UpdateRole, DeleteRole and
// UndeleteRole are bound only to /v1/{name=organizations/*/roles/*} and
// /v1/{name=projects/*/roles/*} (their google.api.http rules in
// google/iam/admin/v1/iam.proto; the discovery document has no roles.patch,
// roles.delete or roles.undelete), so PATCH or DELETE /v1/roles/viewer gets
// Google's front end's 404, not the 501 of a method the fake does not serve,
// and nothing reaches the call log; over gRPC the method answers
// INVALID_ARGUMENT (TestPredefinedRolesGRPC).
func TestPredefinedRoleWritesREST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	hc := srv.HTTPClient()
	for _, tc := range []struct{ verb, path string }{
		{http.MethodPatch, "v1/roles/viewer?updateMask=title"},
		{http.MethodDelete, "v1/roles/viewer"},
		{http.MethodPost, "v1/roles/viewer:undelete"},
	} {
		req, err := http.NewRequest(tc.verb, srv.RESTEndpoint()+tc.path, strings.NewReader(`{"title":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "was not found on this server") {
			t.Fatalf("%s /%s: %d %s", tc.verb, tc.path, resp.StatusCode, body)
		}
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Fatalf("%d calls logged, want none", n)
	}
	// The role is unchanged.
	c := newClients(t, srv)
	r, err := c.admin.GetRole(context.Background(), &adminpb.GetRoleRequest{Name: "roles/viewer"}, noRetry)
	if err != nil || r.Title != "Viewer" {
		t.Fatalf("roles/viewer: %v, %v", r, err)
	}
}
