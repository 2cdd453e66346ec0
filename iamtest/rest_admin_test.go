package iamtest_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	iamv1 "google.golang.org/api/iam/v1"

	"github.com/iamretry/iamretry/iamtest"
)

// newIAMREST builds the discovery client google.golang.org/api/iam/v1 on the
// fake's REST face (the admin API has no GAPIC REST client).
func newIAMREST(t *testing.T, srv *iamtest.Server) *iamv1.Service {
	t.Helper()
	svc, err := iamv1.NewService(context.Background(), srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// wantHTTP fails t unless err is a *googleapi.Error with code and a message
// containing msg.
func wantHTTP(t *testing.T, what string, err error, code int, msg string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != code || !strings.Contains(ge.Message, msg) {
		t.Fatalf("%s: got %v, want HTTP %d with %q", what, err, code, msg)
	}
}

// TestCustomRoleLifeCycleREST: the custom-role read-modify-write over REST,
// as the discovery client sends it: projects.roles create, get, patch (role
// as the body, updateMask as a query parameter), delete (etag as a query
// parameter), undelete, list (showDeleted, view). Sources: the HTTP rules of
// google/iam/admin/v1/iam.proto (PATCH /v1/{name=projects/*/roles/*} body
// "role"; DELETE /v1/{name=projects/*/roles/*}); the REST reference
// https://cloud.google.com/iam/docs/reference/rest/v1/projects.roles.
func TestCustomRoleLifeCycleREST(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	svc := newIAMREST(t, srv)
	const name = "projects/p/roles/deployer"

	r, err := svc.Projects.Roles.Create("projects/p", &iamv1.CreateRoleRequest{RoleId: "deployer",
		Role: &iamv1.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.update"}}}).Do()
	if err != nil || r.Name != name || r.Etag == "" {
		t.Fatalf("create: %v, %v", r, err)
	}
	_, err = svc.Projects.Roles.Create("projects/p", &iamv1.CreateRoleRequest{RoleId: "deployer", Role: &iamv1.Role{}}).Do()
	wantHTTP(t, "create again", err, 409, "deployer")
	_, err = svc.Organizations.Roles.Create("organizations/1", &iamv1.CreateRoleRequest{RoleId: "x", Role: &iamv1.Role{}}).Do()
	wantHTTP(t, "role_id too short", err, 400, "role_id")

	got, err := svc.Projects.Roles.Get(name).Do()
	if err != nil || got.Etag != r.Etag {
		t.Fatalf("get: %v, %v", got, err)
	}
	upd, err := svc.Projects.Roles.Patch(name, &iamv1.Role{Description: "deploys", Etag: got.Etag}).UpdateMask("description").Do()
	if err != nil || upd.Description != "deploys" || upd.Title != "Deployer" || upd.Etag == got.Etag {
		t.Fatalf("patch: %v, %v", upd, err)
	}
	_, err = svc.Projects.Roles.Patch(name, &iamv1.Role{Title: "lost", Etag: got.Etag}).Do()
	wantHTTP(t, "patch with a stale etag", err, 409, "concurrent")
	_, err = svc.Projects.Roles.Delete(name).Etag(got.Etag).Do()
	wantHTTP(t, "delete with a stale etag", err, 409, "concurrent")

	del, err := svc.Projects.Roles.Delete(name).Etag(upd.Etag).Do()
	if err != nil || !del.Deleted {
		t.Fatalf("delete: %v, %v", del, err)
	}
	_, err = svc.Projects.Roles.Delete(name).Do()
	wantHTTP(t, "delete again", err, 400, "You can't delete role_id ("+name+") as it is already deleted.")
	listed := func(show bool) int {
		resp, err := svc.Projects.Roles.List("projects/p").ShowDeleted(show).View("FULL").Do()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range resp.Roles {
			if len(r.IncludedPermissions) == 0 {
				t.Fatalf("view FULL without permissions: %v", r)
			}
		}
		return len(resp.Roles)
	}
	if listed(false) != 0 || listed(true) != 1 {
		t.Fatal("showDeleted is not honoured")
	}
	und, err := svc.Projects.Roles.Undelete(name, &iamv1.UndeleteRoleRequest{Etag: del.Etag}).Do()
	if err != nil || und.Deleted {
		t.Fatalf("undelete: %v, %v", und, err)
	}
	if _, err := svc.Projects.Roles.Delete(name).Do(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(iamtest.RoleUndeleteWindow)
	_, err = svc.Projects.Roles.Get(name).Do()
	wantHTTP(t, "get a purged role", err, 404, name)
}

// TestAdminQueriesREST: GetRole, ListRoles, QueryGrantableRoles and
// QueryTestablePermissions over REST (GET /v1/roles, GET /v1/{name=roles/*},
// POST /v1/roles:queryGrantableRoles, POST /v1/permissions:queryTestablePermissions
// in google/iam/admin/v1/iam.proto).
func TestAdminQueriesREST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc := newIAMREST(t, srv)
	r, err := svc.Roles.Get("roles/viewer").Do()
	if err != nil || r.Name != "roles/viewer" || len(r.IncludedPermissions) == 0 {
		t.Fatalf("roles.get: %v, %v", r, err)
	}
	list, err := svc.Roles.List().PageSize(2).Do()
	if err != nil || len(list.Roles) != 2 || list.NextPageToken == "" || len(list.Roles[0].IncludedPermissions) != 0 {
		t.Fatalf("roles.list: %v, %v", list, err)
	}
	if _, err := svc.Projects.Roles.Create("projects/p", &iamv1.CreateRoleRequest{RoleId: "mine", Role: &iamv1.Role{}}).Do(); err != nil {
		t.Fatal(err)
	}
	g, err := svc.Roles.QueryGrantableRoles(&iamv1.QueryGrantableRolesRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p", PageSize: 1000}).Do()
	var names []string
	for _, r := range g.Roles {
		names = append(names, r.Name)
	}
	if err != nil || !slices.Contains(names, "projects/p/roles/mine") || !slices.Contains(names, "roles/owner") {
		t.Fatalf("queryGrantableRoles: %v, %v", names, err)
	}
	p, err := svc.Permissions.QueryTestablePermissions(&iamv1.QueryTestablePermissionsRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p"}).Do()
	if err != nil || len(p.Permissions) == 0 || p.Permissions[0].Stage != "GA" {
		t.Fatalf("queryTestablePermissions: %v, %v", p, err)
	}
}

// TestServiceAccountWritesREST: patch (updateMask as displayName, the
// discovery client's form, and display_name, Terraform's), update,
// disable, enable and undelete over REST (PATCH
// /v1/{service_account.name=projects/*/serviceAccounts/*}, PUT
// /v1/{name=...}, POST ...:disable, :enable, :undelete in
// google/iam/admin/v1/iam.proto); the 429 of the account quota.
func TestServiceAccountWritesREST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc := newIAMREST(t, srv)
	sa, err := svc.Projects.ServiceAccounts.Create("projects/p", &iamv1.CreateServiceAccountRequest{AccountId: "robot-one"}).Do()
	if err != nil {
		t.Fatal(err)
	}
	for i, mask := range []string{"displayName", "display_name"} {
		title := "Robot " + mask
		got, err := svc.Projects.ServiceAccounts.Patch(sa.Name, &iamv1.PatchServiceAccountRequest{
			ServiceAccount: &iamv1.ServiceAccount{DisplayName: title, Description: "not in the mask"}, UpdateMask: mask}).Do()
		if err != nil || got.DisplayName != title || got.Description != "" {
			t.Fatalf("patch %d (%s): %v, %v", i, mask, got, err)
		}
	}
	_, err = svc.Projects.ServiceAccounts.Patch(sa.Name, &iamv1.PatchServiceAccountRequest{
		ServiceAccount: &iamv1.ServiceAccount{DisplayName: strings.Repeat("n", 101)}, UpdateMask: "displayName"}).Do()
	wantHTTP(t, "101-byte display name", err, 400, "The display_name length (101) is longer than the maximum allowed length 100.")
	if got, err := svc.Projects.ServiceAccounts.Update(sa.Name, &iamv1.ServiceAccount{DisplayName: "Updated"}).Do(); err != nil || got.DisplayName != "Updated" {
		t.Fatalf("update: %v, %v", got, err)
	}
	if _, err := svc.Projects.ServiceAccounts.Disable(sa.Name, &iamv1.DisableServiceAccountRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Projects.ServiceAccounts.Get(sa.Name).Do(); got == nil || !got.Disabled {
		t.Fatal("not disabled")
	}
	if _, err := svc.Projects.ServiceAccounts.Enable(sa.Name, &iamv1.EnableServiceAccountRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Projects.ServiceAccounts.Delete(sa.Name).Do(); err != nil {
		t.Fatal(err)
	}
	und, err := svc.Projects.ServiceAccounts.Undelete("projects/-/serviceAccounts/"+sa.UniqueId, &iamv1.UndeleteServiceAccountRequest{}).Do()
	if err != nil || und.RestoredAccount == nil || und.RestoredAccount.Email != sa.Email {
		t.Fatalf("undelete: %v, %v", und, err)
	}
	srv.SetServiceAccountQuota(1)
	_, err = svc.Projects.ServiceAccounts.Create("projects/p", &iamv1.CreateServiceAccountRequest{AccountId: "robot-two"}).Do()
	wantHTTP(t, "past the quota", err, 429, "Maximum number of service accounts on project reached.")
}

// TestServiceAccountKeysREST: keys list (keyTypes as a repeated query
// parameter), get (publicKeyType), disable, enable, delete and upload over
// REST (the HTTP rules of google/iam/admin/v1/iam.proto: GET
// /v1/{name=projects/*/serviceAccounts/*}/keys, POST .../keys:upload, ...).
func TestServiceAccountKeysREST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc := newIAMREST(t, srv)
	sa, err := svc.Projects.ServiceAccounts.Create("projects/p", &iamv1.CreateServiceAccountRequest{AccountId: "robot-one"}).Do()
	if err != nil {
		t.Fatal(err)
	}
	k, err := svc.Projects.ServiceAccounts.Keys.Create(sa.Name, &iamv1.CreateServiceAccountKeyRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.Projects.ServiceAccounts.Keys.List(sa.Name).KeyTypes("USER_MANAGED").Do()
	if err != nil || len(list.Keys) != 1 || list.Keys[0].PrivateKeyData != "" {
		t.Fatalf("list USER_MANAGED: %v, %v", list, err)
	}
	if sys, err := svc.Projects.ServiceAccounts.Keys.List(sa.Name).KeyTypes("SYSTEM_MANAGED").Do(); err != nil || len(sys.Keys) != 0 {
		t.Fatalf("list SYSTEM_MANAGED: %v, %v", sys, err)
	}
	got, err := svc.Projects.ServiceAccounts.Keys.Get(k.Name).PublicKeyType("TYPE_X509_PEM_FILE").Do()
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, _ := base64.StdEncoding.DecodeString(got.PublicKeyData)
	if !strings.HasPrefix(string(pemBytes), "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("X509 public key %q", pemBytes)
	}
	if _, err := svc.Projects.ServiceAccounts.Keys.Disable(k.Name, &iamv1.DisableServiceAccountKeyRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.Projects.ServiceAccounts.Keys.Get(k.Name).Do(); got == nil || !got.Disabled || got.PublicKeyData != "" {
		t.Fatalf("after disable: %v", got)
	}
	if _, err := svc.Projects.ServiceAccounts.Keys.Enable(k.Name, &iamv1.EnableServiceAccountKeyRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Projects.ServiceAccounts.Keys.Delete(k.Name).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Projects.ServiceAccounts.Keys.Get(k.Name).Do()
	wantHTTP(t, "get a deleted key", err, 404, "")
	up, err := svc.Projects.ServiceAccounts.Keys.Upload(sa.Name, &iamv1.UploadServiceAccountKeyRequest{
		PublicKeyData: base64.StdEncoding.EncodeToString(selfSignedPEM(t, true))}).Do()
	if err != nil || up.KeyOrigin != "USER_PROVIDED" {
		t.Fatalf("upload: %v, %v", up, err)
	}
}

// TestUnservedIs501REST: what the fake does not serve of IAM's routes
// answers 501 UNIMPLEMENTED through the call log, as over gRPC: the
// deprecated signBlob and signJwt (replaced by the IAM Service Account
// Credentials API), lintPolicy beyond a condition, and the other methods of
// the resourcemanager services. A request that is no route of IAM's at all
// answers 404 with an HTML body, as Google's front end does, and is no call.
func TestUnservedIs501REST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc := newIAMREST(t, srv)
	sa := srv.SeedServiceAccount("p", "robot-one")
	_, err := svc.Projects.ServiceAccounts.SignBlob(sa.Name, &iamv1.SignBlobRequest{BytesToSign: "YQ=="}).Do()
	wantHTTP(t, "signBlob", err, 501, "")
	_, err = svc.Projects.ServiceAccounts.SignJwt(sa.Name, &iamv1.SignJwtRequest{Payload: "{}"}).Do()
	wantHTTP(t, "signJwt", err, 501, "")
	_, err = svc.IamPolicies.LintPolicy(&iamv1.LintPolicyRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p"}).Do()
	wantHTTP(t, "lintPolicy", err, 501, "")
	crmSvc, err := crm.NewService(context.Background(), srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = crmSvc.Projects.Get("projects/p").Do()
	wantHTTP(t, "projects.get", err, 501, "")
	if n := len(srv.Calls()); n != 4 {
		t.Fatalf("logged %d calls, want 4", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, vp := range [][2]string{{"PATCH", "v9/nothing/here"}, {"GET", "v1/no/such/thing"}, {"PUT", "v1/roles"}} {
		req, _ := http.NewRequestWithContext(ctx, vp[0], srv.RESTEndpoint()+vp[1], nil)
		resp, err := srv.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(body), "/"+vp[1]+"</code> was not found on this server.") {
			t.Fatalf("%s %s: %d %q %s", vp[0], vp[1], resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if n := len(srv.Calls()); n != 4 {
		t.Fatalf("logged %d calls after the unrouted requests, want 4", n)
	}
}
