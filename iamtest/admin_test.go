package iamtest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

func createSA(t *testing.T, f *fixture, project, id string) *adminpb.ServiceAccount {
	t.Helper()
	return must[*adminpb.ServiceAccount](t)(f.admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
		Name: "projects/" + project, AccountId: id, ServiceAccount: &adminpb.ServiceAccount{DisplayName: "Robot " + id}}))
}

func TestServiceAccountLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sa := createSA(t, f, "p1", "robot-one")
	if sa.Name != "projects/p1/serviceAccounts/robot-one@p1.iam.gserviceaccount.com" ||
		sa.Email != "robot-one@p1.iam.gserviceaccount.com" || sa.ProjectId != "p1" ||
		len(sa.UniqueId) != 21 || sa.DisplayName != "Robot robot-one" {
		t.Fatalf("created %v", sa)
	}
	other := createSA(t, f, "p1", "robot-two")
	if other.UniqueId == sa.UniqueId {
		t.Fatal("unique IDs repeat")
	}

	_, err := f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "robot-one"})
	wantCode(t, err, codes.AlreadyExists, "Service account robot-one already exists within project projects/p1.")
	_, err = f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "Bad_ID"})
	wantCode(t, err, codes.InvalidArgument, "")
	_, err = f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "p1", AccountId: "robot-three"})
	wantCode(t, err, codes.InvalidArgument, `invalid project name "p1": expected projects/PROJECT_ID`)

	for _, name := range []string{
		sa.Name, "projects/-/serviceAccounts/" + sa.Email,
		"projects/p1/serviceAccounts/" + sa.UniqueId, "projects/-/serviceAccounts/" + sa.UniqueId,
	} {
		got, err := f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: name})
		if err != nil || !proto.Equal(got, sa) {
			t.Fatalf("GetServiceAccount(%q) = %v, %v", name, got, err)
		}
	}
	_, err = f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p2/serviceAccounts/" + sa.Email})
	wantCode(t, err, codes.NotFound, "")
	_, err = f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "robot-one"})
	wantCode(t, err, codes.InvalidArgument, "")

	// Its policy is in the shared store, under its canonical name.
	must[*iampb.Policy](t)(f.admin.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/-/serviceAccounts/" + sa.Email,
		Policy: &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/iam.serviceAccountUser", "user:a@example.com")}}}))
	viaIAM := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name}))
	viaAdmin := must[*iampb.Policy](t)(f.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Email}))
	if len(viaIAM.Bindings) != 1 || !proto.Equal(viaIAM, viaAdmin) || !proto.Equal(viaIAM, f.srv.Policy(sa.Email)) {
		t.Fatalf("IAMPolicy %v, admin %v", viaIAM, viaAdmin)
	}
	must[*iampb.TestIamPermissionsResponse](t)(f.admin.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: sa.Name, Permissions: []string{"iam.serviceAccounts.actAs"}}))
	_, err = f.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1/serviceAccounts/nobody@p1.iam.gserviceaccount.com"})
	wantCode(t, err, codes.NotFound, "Service account projects/p1/serviceAccounts/nobody@p1.iam.gserviceaccount.com does not exist.")

	must[*emptypb.Empty](t)(f.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name}))
	_, err = f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
	wantCode(t, err, codes.NotFound, "")
	_, err = f.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name})
	wantCode(t, err, codes.NotFound, "")
	if !bytes.Equal(f.srv.Policy(sa.Name).Etag, emptyPolicyEtag) {
		t.Fatal("deleting an account kept its policy")
	}
	if f.srv.ServiceAccount(sa.Email) != nil || f.srv.ServiceAccount(other.Email) == nil {
		t.Fatal("ServiceAccount helper disagrees")
	}
}

func TestListServiceAccountsPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	for i := range 5 {
		createSA(t, f, "p", fmt.Sprintf("robot-%d", 4-i))
	}
	createSA(t, f, "elsewhere", "robot-x")
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		resp := must[*adminpb.ListServiceAccountsResponse](t)(f.admin.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/p", PageSize: 2, PageToken: token}))
		for _, a := range resp.Accounts {
			got = append(got, strings.Split(a.Email, "@")[0])
		}
		if token = resp.NextPageToken; token == "" {
			if pages != 2 {
				t.Fatalf("%d pages", pages+1)
			}
			break
		}
	}
	want := "[robot-0 robot-1 robot-2 robot-3 robot-4]"
	if fmt.Sprint(got) != want {
		t.Fatalf("listed %v, want %s", got, want)
	}
	_, err := f.admin.ListServiceAccounts(ctx, &adminpb.ListServiceAccountsRequest{Name: "projects/p", PageToken: "zz"})
	wantCode(t, err, codes.InvalidArgument, `invalid page_token "zz"`)
}

func TestCreateServiceAccountKeyMintsEveryCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	sa := createSA(t, f, "p", "keyed-robot")
	names := map[string]bool{}
	for range 3 {
		k := must[*adminpb.ServiceAccountKey](t)(f.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/-/serviceAccounts/" + sa.Email}))
		if names[k.Name] || len(k.PrivateKeyData) == 0 || k.ValidAfterTime.AsTime() != f.clock.Now() {
			t.Fatalf("key %v", k)
		}
		names[k.Name] = true
	}
	if n := len(f.srv.ServiceAccountKeys(sa.Name)); n != 3 {
		t.Fatalf("%d keys stored", n)
	}
	_, err := f.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/p/serviceAccounts/ghost@p.iam.gserviceaccount.com"})
	wantCode(t, err, codes.NotFound, "")
}

func TestRoles_GetAndList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	want := []string{"roles/editor", "roles/iam.serviceAccountTokenCreator", "roles/iam.serviceAccountUser", "roles/owner", "roles/viewer"}
	for _, name := range want {
		r := must[*adminpb.Role](t)(f.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: name}))
		if r.Name != name || r.Title == "" || len(r.IncludedPermissions) == 0 {
			t.Fatalf("GetRole(%s) = %v", name, r)
		}
	}
	// A role the fake does not hold answers with no permissions
	// (TestGetRoleAnyPredefinedName), NOT_FOUND under SetKnownRolesOnly.
	f.srv.SetKnownRolesOnly(true)
	_, err := f.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/nope"})
	wantCode(t, err, codes.NotFound, "The role named roles/nope was not found.")

	var got []string
	resp := must[*adminpb.ListRolesResponse](t)(f.admin.ListRoles(ctx, &adminpb.ListRolesRequest{PageSize: 3}))
	for _, r := range resp.Roles {
		if len(r.IncludedPermissions) != 0 {
			t.Fatal("BASIC view has permissions")
		}
		got = append(got, r.Name)
	}
	resp = must[*adminpb.ListRolesResponse](t)(f.admin.ListRoles(ctx, &adminpb.ListRolesRequest{PageSize: 3, PageToken: resp.NextPageToken, View: adminpb.RoleView_FULL}))
	for _, r := range resp.Roles {
		if len(r.IncludedPermissions) == 0 {
			t.Fatal("FULL view lacks permissions")
		}
		got = append(got, r.Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || resp.NextPageToken != "" {
		t.Fatalf("listed %v (next %q)", got, resp.NextPageToken)
	}
	custom := must[*adminpb.ListRolesResponse](t)(f.admin.ListRoles(ctx, &adminpb.ListRolesRequest{Parent: "projects/p"}))
	if len(custom.Roles) != 0 {
		t.Fatal("a project has custom roles")
	}
}

func TestAdminUnimplemented(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.admin.SignBlob(ctx, &adminpb.SignBlobRequest{Name: "x"})
	wantCode(t, err, codes.Unimplemented, "")
	_, err = f.admin.LintPolicy(ctx, &adminpb.LintPolicyRequest{})
	wantCode(t, err, codes.Unimplemented, "")
	if c := f.srv.Calls(); len(c) != 2 || c[0].Code != codes.Unimplemented || c[0].Injected {
		t.Fatalf("log %+v", c)
	}
}
