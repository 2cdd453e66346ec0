package iamtest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
)

// TestServiceAccountWritesGRPC: Patch with its required update_mask,
// Update, Disable and Enable (idempotent), the field limits, through
// admin.NewIamClient. Sources: google/iam/admin/v1/iam.proto
// (PatchServiceAccountRequest; UpdateServiceAccount "You can update only the
// display_name field"; EnableServiceAccount "If the service account is
// already enabled, then this method has no effect"; ServiceAccount.display_name
// "The maximum length is 100 UTF-8 bytes", description "256 UTF-8 bytes");
// the message "The display_name length (101) is longer than the maximum
// allowed length 100." is IAM's (issue 22).
func TestServiceAccountWritesGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	sa := c.createAccount(t, "p", "robot-one")

	_, err := c.admin.PatchServiceAccount(ctx, &adminpb.PatchServiceAccountRequest{
		ServiceAccount: &adminpb.ServiceAccount{Name: sa.Name, DisplayName: "x"}}, noRetry)
	wantErr(t, "patch without a mask", err, codes.InvalidArgument, "update_mask")
	got, err := c.admin.PatchServiceAccount(ctx, &adminpb.PatchServiceAccountRequest{
		ServiceAccount: &adminpb.ServiceAccount{Name: sa.Name, DisplayName: "Robot", Description: "ignored"},
		UpdateMask:     &fieldmaskpb.FieldMask{Paths: []string{"display_name"}}}, noRetry)
	if err != nil || got.DisplayName != "Robot" || got.Description != "" || string(got.Etag) == string(sa.Etag) {
		t.Fatalf("patch: %v, %v", got, err)
	}
	_, err = c.admin.PatchServiceAccount(ctx, &adminpb.PatchServiceAccountRequest{
		ServiceAccount: &adminpb.ServiceAccount{Name: sa.Name, DisplayName: strings.Repeat("é", 50) + "x"},
		UpdateMask:     &fieldmaskpb.FieldMask{Paths: []string{"display_name"}}}, noRetry)
	wantErr(t, "101-byte display name", err, codes.InvalidArgument, "The display_name length (101) is longer than the maximum allowed length 100.")
	_, err = c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "robot-two",
		ServiceAccount: &adminpb.ServiceAccount{Description: strings.Repeat("d", 257)}}, noRetry)
	wantErr(t, "257-byte description", err, codes.InvalidArgument, "The description length (257) is longer than the maximum allowed length 256.")

	upd, err := c.admin.UpdateServiceAccount(ctx, &adminpb.ServiceAccount{Name: sa.Name, DisplayName: "Robot 2"}, noRetry)
	if err != nil || upd.DisplayName != "Robot 2" {
		t.Fatalf("update: %v, %v", upd, err)
	}

	for range 2 {
		if err := c.admin.DisableServiceAccount(ctx, &adminpb.DisableServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
			t.Fatal(err)
		}
	}
	if a, _ := c.getAccount(sa.Email); !a.GetDisabled() {
		t.Fatal("not disabled")
	}
	if err := c.admin.EnableServiceAccount(ctx, &adminpb.EnableServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	if a, _ := c.getAccount(sa.Email); a.GetDisabled() {
		t.Fatal("not enabled")
	}
}

// TestServiceAccountUndeleteGRPC: UndeleteServiceAccount by unique ID
// restores the account and turns its deleted: members back
// (UndeleteServiceAccountRequest.name "projects/{PROJECT_ID}/serviceAccounts/{UNIQUE_ID}";
// google.iam.v1.Binding.members documents deleted:serviceAccount:EMAIL?uid=ID),
// within 30 days (DeleteServiceAccount: "IAM permanently removes the service
// account 30 days later").
func TestServiceAccountUndeleteGRPC(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	ctx := context.Background()
	sa := c.createAccount(t, "p", "robot-one")
	member := "serviceAccount:" + sa.Email
	if err := c.grant("projects/p", "roles/viewer", member); err != nil {
		t.Fatal(err)
	}
	if err := c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	deleted := "deleted:" + member + "?uid=" + sa.UniqueId
	if got := c.members(t, "projects/p", "roles/viewer"); !slices.Equal(got, []string{deleted}) {
		t.Fatalf("after delete: %v", got)
	}
	_, err := c.admin.UndeleteServiceAccount(ctx, &adminpb.UndeleteServiceAccountRequest{Name: "projects/-/serviceAccounts/" + sa.Email}, noRetry)
	wantErr(t, "undelete by email", err, codes.InvalidArgument, "unique ID")
	resp, err := c.admin.UndeleteServiceAccount(ctx, &adminpb.UndeleteServiceAccountRequest{Name: "projects/-/serviceAccounts/" + sa.UniqueId}, noRetry)
	if err != nil || resp.RestoredAccount.GetEmail() != sa.Email {
		t.Fatalf("undelete: %v, %v", resp, err)
	}
	if got := c.members(t, "projects/p", "roles/viewer"); !slices.Equal(got, []string{member}) {
		t.Fatalf("after undelete: %v", got)
	}
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatal(err)
	}
	if err := c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	clock.Advance(iamtest.AccountUndeleteWindow)
	_, err = c.admin.UndeleteServiceAccount(ctx, &adminpb.UndeleteServiceAccountRequest{Name: "projects/-/serviceAccounts/" + sa.UniqueId}, noRetry)
	wantErr(t, "undelete after 30 days", err, codes.PermissionDenied, "")
}

// TestServiceAccountQuotaGRPC: 100 accounts per project, then
// RESOURCE_EXHAUSTED (https://cloud.google.com/iam/quotas; the message users
// quote from IAM's 429); SetServiceAccountQuota changes the number.
func TestServiceAccountQuotaGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	for i := range iamtest.MaxServiceAccountsPerProject {
		srv.SeedServiceAccount("p", "robot-"+strings.Repeat("a", 1+i/26)+string(rune('a'+i%26)))
	}
	_, err := c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "one-too-many"}, noRetry)
	wantErr(t, "the 101st account", err, codes.ResourceExhausted, "Maximum number of service accounts on project reached.")
	c.createAccount(t, "q", "other-project")
	srv.SetServiceAccountQuota(1)
	_, err = c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/q", AccountId: "second-one"}, noRetry)
	wantErr(t, "quota 1", err, codes.ResourceExhausted, "")
	if msg := panicMessage(func() { srv.SetServiceAccountQuota(0) }); !strings.Contains(msg, "SetServiceAccountQuota(0)") {
		t.Fatalf("SetServiceAccountQuota(0) panicked with %q", msg)
	}
}

// selfSignedPEM makes an X.509 v3 certificate in PEM around a fresh key:
// the input of UploadServiceAccountKey ("Must be an RSA public key that is
// wrapped in an X.509 v3 certificate").
func selfSignedPEM(t *testing.T, rsaKey bool) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "upload"},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	var der []byte
	var err error
	if rsaKey {
		k, _ := rsa.GenerateKey(rand.Reader, 1024) //nolint: a test key, fast to make
		der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	} else {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	}
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestServiceAccountKeysGRPC: List (key_types filter, no key material),
// Get in each public key format, Disable, Enable, Delete (which frees one
// of the 10 slots) and Upload. Sources: google/iam/admin/v1/iam.proto
// (ListServiceAccountKeysRequest.key_types "If no key type is provided, all
// keys are returned"; ServiceAccountKey.private_key_data "Only provided in
// CreateServiceAccountKey responses", public_key_data "Only provided in
// GetServiceAccountKey responses"; GetServiceAccountKeyRequest.public_key_type
// "The default is TYPE_NONE, which means that the public key is not
// returned"); https://cloud.google.com/iam/quotas (10 keys per account).
func TestServiceAccountKeysGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	sa := c.createAccount(t, "p", "robot-one")
	var keys []*adminpb.ServiceAccountKey
	for range 10 {
		k, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	_, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry)
	wantErr(t, "the 11th key", err, codes.FailedPrecondition, "")

	list, err := c.admin.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa.Name}, noRetry)
	if err != nil || len(list.Keys) != 10 {
		t.Fatalf("list: %d keys, %v", len(list.GetKeys()), err)
	}
	for _, k := range list.Keys {
		if len(k.PrivateKeyData) != 0 || len(k.PublicKeyData) != 0 {
			t.Fatalf("a listed key carries key material: %v", k)
		}
	}
	sys, err := c.admin.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa.Name,
		KeyTypes: []adminpb.ListServiceAccountKeysRequest_KeyType{adminpb.ListServiceAccountKeysRequest_SYSTEM_MANAGED}}, noRetry)
	if err != nil || len(sys.Keys) != 0 {
		t.Fatalf("SYSTEM_MANAGED filter: %v, %v", sys, err)
	}

	name := keys[0].Name
	none, err := c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name}, noRetry)
	if err != nil || len(none.PublicKeyData) != 0 || len(none.PrivateKeyData) != 0 {
		t.Fatalf("TYPE_NONE: %v, %v", none, err)
	}
	x5, err := c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name,
		PublicKeyType: adminpb.ServiceAccountPublicKeyType_TYPE_X509_PEM_FILE}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(x5.PublicKeyData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("X509 format: %v", err)
	}
	raw, err := c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name,
		PublicKeyType: adminpb.ServiceAccountPublicKeyType_TYPE_RAW_PUBLIC_KEY}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := x509.ParsePKIXPublicKey(raw.PublicKeyData); err != nil || !pub.(*rsa.PublicKey).Equal(cert.PublicKey) {
		t.Fatalf("RAW format: %v", err)
	}

	if err := c.admin.DisableServiceAccountKey(ctx, &adminpb.DisableServiceAccountKeyRequest{Name: name}, noRetry); err != nil {
		t.Fatal(err)
	}
	if k, _ := c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name}, noRetry); !k.GetDisabled() {
		t.Fatal("not disabled")
	}
	if err := c.admin.EnableServiceAccountKey(ctx, &adminpb.EnableServiceAccountKeyRequest{Name: name}, noRetry); err != nil {
		t.Fatal(err)
	}
	if k, _ := c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name}, noRetry); k.GetDisabled() {
		t.Fatal("not enabled")
	}

	cert1 := selfSignedPEM(t, true)
	_, err = c.admin.UploadServiceAccountKey(ctx, &adminpb.UploadServiceAccountKeyRequest{Name: sa.Name, PublicKeyData: cert1}, noRetry)
	wantErr(t, "upload past 10 keys", err, codes.FailedPrecondition, "")
	if err := c.admin.DeleteServiceAccountKey(ctx, &adminpb.DeleteServiceAccountKeyRequest{Name: name}, noRetry); err != nil {
		t.Fatal(err)
	}
	_, err = c.admin.GetServiceAccountKey(ctx, &adminpb.GetServiceAccountKeyRequest{Name: name}, noRetry)
	wantErr(t, "get a deleted key", err, codes.NotFound, "")
	up, err := c.admin.UploadServiceAccountKey(ctx, &adminpb.UploadServiceAccountKeyRequest{Name: sa.Name, PublicKeyData: cert1}, noRetry)
	if err != nil || up.KeyOrigin != adminpb.ServiceAccountKeyOrigin_USER_PROVIDED || up.KeyType != adminpb.ListServiceAccountKeysRequest_USER_MANAGED {
		t.Fatalf("upload into the freed slot: %v, %v", up, err)
	}
	_, err = c.admin.UploadServiceAccountKey(ctx, &adminpb.UploadServiceAccountKeyRequest{Name: sa.Name, PublicKeyData: []byte("not a certificate")}, noRetry)
	wantErr(t, "upload garbage", err, codes.InvalidArgument, "public_key_data")
	_, err = c.admin.UploadServiceAccountKey(ctx, &adminpb.UploadServiceAccountKeyRequest{Name: sa.Name, PublicKeyData: selfSignedPEM(t, false)}, noRetry)
	wantErr(t, "upload an EC key", err, codes.InvalidArgument, "RSA")
}

// TestQueryMethodsGRPC: QueryGrantableRoles on a full resource name lists the
// predefined roles and the project's custom roles;
// QueryTestablePermissions answers permissions; a name that is no full
// resource name is INVALID_ARGUMENT (QueryGrantableRolesRequest.full_resource_name:
// "//cloudresourcemanager.googleapis.com/projects/my-project").
func TestQueryMethodsGRPC(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	if _, err := c.admin.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "mine"}, noRetry); err != nil {
		t.Fatal(err)
	}
	resp, err := c.admin.QueryGrantableRoles(ctx, &adminpb.QueryGrantableRolesRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p"}, noRetry)
	if err != nil || !slices.Contains(roleNames(resp.Roles), "roles/viewer") || !slices.Contains(roleNames(resp.Roles), "projects/p/roles/mine") {
		t.Fatalf("QueryGrantableRoles: %v, %v", roleNames(resp.GetRoles()), err)
	}
	_, err = c.admin.QueryGrantableRoles(ctx, &adminpb.QueryGrantableRolesRequest{FullResourceName: "projects/p"}, noRetry)
	wantErr(t, "a relative name", err, codes.InvalidArgument, "full_resource_name")
	perms, err := c.admin.QueryTestablePermissions(ctx, &adminpb.QueryTestablePermissionsRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p", PageSize: 2}, noRetry)
	if err != nil || len(perms.Permissions) != 2 || perms.NextPageToken == "" {
		t.Fatalf("QueryTestablePermissions: %v, %v", perms, err)
	}
}

// TestCallLogApplied: the log says whether the server acted. A write whose
// answer was lost is Injected and Applied (it committed); a scripted
// failure is Injected and not Applied; the fake's own refusal is neither.
func TestCallLogApplied(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	srv.FailNext(iamtest.MethodCreateRole, 1, codes.Unavailable)
	srv.LoseNextAnswers(iamtest.MethodCreateRole, 1)
	req := &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "once"}
	for range 3 {
		_, _ = c.admin.CreateRole(ctx, req, noRetry)
	}
	var got []string
	for _, call := range srv.Calls() {
		got = append(got, call.Code.String()+" injected="+boolStr(call.Injected)+" applied="+boolStr(call.Applied))
	}
	want := []string{
		"Unavailable injected=true applied=false",
		"Unavailable injected=true applied=true",
		"AlreadyExists injected=false applied=false",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
