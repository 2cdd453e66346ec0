package iamtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/googleapi"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// TestAccountIDRefusals (issue 31, item 1): CreateServiceAccount refuses an
// account_id outside IAM's rule (CreateServiceAccountRequest.account_id in
// google/iam/admin/v1/iam.proto: "6-30 characters long, and match the
// regular expression [a-z]([-a-z0-9]*[a-z0-9])") INVALID_ARGUMENT in IAM's
// words, with a google.rpc.DebugInfo whose detail repeats them: the length
// first ('The account ID "ID" does not have a length between 6 and 30.',
// gcloud's output in https://github.com/google/litmus/issues/107), then the
// pattern ('ID does not match [a-z][a-z\d\-]*[a-z\d].', the REST body in
// https://github.com/GoogleCloudPlatform/cloud-code-intellij/issues/2062).
// Faces: gRPC and REST.
func TestAccountIDRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	for _, tc := range []struct{ id, msg string }{
		{"robot", `The account ID "robot" does not have a length between 6 and 30.`},
		{"a-name-of-thirty-one-characters", `The account ID "a-name-of-thirty-one-characters" does not have a length between 6 and 30.`},
		{"", `The account ID "" does not have a length between 6 and 30.`},
		{"robot-", `robot- does not match [a-z][a-z\d\-]*[a-z\d].`},
		{"1robot", `1robot does not match [a-z][a-z\d\-]*[a-z\d].`},
		{"Robot1", `Robot1 does not match [a-z][a-z\d\-]*[a-z\d].`},
		{"robot_one", `robot_one does not match [a-z][a-z\d\-]*[a-z\d].`},
	} {
		_, err := c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: tc.id}, noRetry)
		wantStatus(t, err, codes.InvalidArgument, tc.msg)
		var debug *errdetails.DebugInfo
		for _, d := range status.Convert(err).Details() {
			if di, ok := d.(*errdetails.DebugInfo); ok {
				debug = di
			}
		}
		if debug.GetDetail() != tc.msg {
			t.Fatalf("account_id %q: DebugInfo %v, want detail %q", tc.id, debug, tc.msg)
		}

		_, err = svc.Projects.ServiceAccounts.Create("projects/p", &iamv1.CreateServiceAccountRequest{AccountId: tc.id}).Do()
		wantHTTP(t, "serviceAccounts.create "+tc.id, err, http.StatusBadRequest, tc.msg)
		var ge *googleapi.Error
		if !errors.As(err, &ge) || !containsDebugInfo(ge.Details, tc.msg) {
			t.Fatalf("serviceAccounts.create %q: details %v lack a DebugInfo %q", tc.id, ge.Details, tc.msg)
		}
	}
	for _, id := range []string{"robot1", "a-name-of-thirty-characters-ok"} {
		if _, err := c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: id}, noRetry); err != nil {
			t.Fatalf("account_id %q: %v", id, err)
		}
	}
}

// containsDebugInfo reports whether REST error details hold a
// google.rpc.DebugInfo with detail.
func containsDebugInfo(details []any, detail string) bool {
	for _, d := range details {
		m, ok := d.(map[string]any)
		if ok && m["@type"] == "type.googleapis.com/google.rpc.DebugInfo" && fmt.Sprint(m["detail"]) == detail {
			return true
		}
	}
	return false
}

// TestBareEmailIsNoAccountName (issue 31, item 1): the admin API names a
// service account projects/{PROJECT_ID}/serviceAccounts/{ACCOUNT}, "-" as the
// project inferring it from the account (GetServiceAccountRequest.name and
// the other requests' name comments in google/iam/admin/v1/iam.proto), so a
// bare EMAIL is refused INVALID_ARGUMENT on gRPC (IAM's words for it are not
// in public sources: the fake's message names the forms), and over REST it
// is no route of IAM's (GET /v1/{name=projects/*/serviceAccounts/*}): 404.
func TestBareEmailIsNoAccountName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	sa := c.createAccount(t, "p", "deployer")
	const msg = `invalid service account name "deployer@p.iam.gserviceaccount.com": expected projects/PROJECT_ID/serviceAccounts/EMAIL_OR_UNIQUE_ID or projects/-/serviceAccounts/EMAIL`
	_, err := c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Email}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	err = c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Email}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	_, err = c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Email}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	_, err = c.admin.ListServiceAccountKeys(ctx, &adminpb.ListServiceAccountKeysRequest{Name: sa.Email}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	_, err = svc.Projects.ServiceAccounts.Get(sa.Email).Do()
	wantHTTP(t, "serviceAccounts.get of a bare email", err, http.StatusNotFound, "")
	// The forms IAM names still answer, and the account is still there.
	for _, name := range []string{sa.Name, "projects/-/serviceAccounts/" + sa.Email, "projects/-/serviceAccounts/" + sa.UniqueId} {
		if _, err := c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: name}, noRetry); err != nil {
			t.Fatalf("GetServiceAccount %s: %v", name, err)
		}
	}
	if _, err := svc.Projects.ServiceAccounts.Get("projects/-/serviceAccounts/" + sa.Email).Do(); err != nil {
		t.Fatalf("serviceAccounts.get: %v", err)
	}
}
