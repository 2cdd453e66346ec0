package iamtest_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"github.com/googleapis/gax-go/v2/apierror"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// TestRESTErrorsArray: REST error bodies carry the legacy "errors" array
// beside code, message, status and details, as Google's front end writes
// them (https://cloud.google.com/apis/design/errors#http_mapping shows the
// v1 error format's "errors"; what makes googleapi.Error print ", badRequest").
func TestRESTErrorsArray(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc := newIAMREST(t, srv)
	_, err := svc.Projects.ServiceAccounts.Create("projects/p", &iamv1.CreateServiceAccountRequest{AccountId: "x"}).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || len(ge.Errors) != 1 || ge.Errors[0].Reason != "badRequest" || !strings.HasSuffix(ge.Error(), ", badRequest") {
		t.Fatalf("got %v", err)
	}
	sa := srv.SeedServiceAccount("p", "robot-one")
	_, err = svc.Projects.ServiceAccounts.Get(sa.Name + "x").Do()
	if !errors.As(err, &ge) || ge.Errors[0].Reason != "notFound" {
		t.Fatalf("got %v", err)
	}
}

// TestUninvitedOwnerDetail: Resource Manager refuses roles/owner to a user
// who was not invited with a ProjectIamPolicyError of type
// SOLO_MUST_INVITE_OWNERS (the detail users quote from
// projects.setIamPolicy; the rule is in
// https://cloud.google.com/resource-manager/reference/rest/v3/projects/setIamPolicy).
func TestUninvitedOwnerDetail(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc, err := crm.NewService(context.Background(), srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: &crm.Policy{
		Bindings: []*crm.Binding{{Role: "roles/owner", Members: []string{"user:new@example.com"}}}}}).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 {
		t.Fatalf("got %v", err)
	}
	found := false
	for _, d := range ge.Details {
		m, _ := d.(map[string]any)
		if m["@type"] == "type.googleapis.com/google.cloudresourcemanager.v1.ProjectIamPolicyError" &&
			m["type"] == "SOLO_MUST_INVITE_OWNERS" && m["member"] == "user:new@example.com" && m["role"] == "roles/owner" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no ProjectIamPolicyError in %v", ge.Details)
	}
}

// TestInjectedPermissionDeniedNamesPermission: an injected PERMISSION_DENIED
// carries an ErrorInfo (reason IAM_PERMISSION_DENIED) whose metadata names
// the permission and the resource, under the domain of the service that
// owns the resource, as IAM's do
// (https://cloud.google.com/iam/docs/troubleshooting-access).
func TestInjectedPermissionDeniedNamesPermission(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	info := func(err error) *errdetails.ErrorInfo {
		for _, d := range status.Convert(err).Details() {
			if ei, ok := d.(*errdetails.ErrorInfo); ok {
				return ei
			}
		}
		t.Fatalf("no ErrorInfo in %v", err)
		return nil
	}
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.PermissionDenied)
	_, err := c.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
	if ei := info(err); ei.Domain != "cloudresourcemanager.googleapis.com" || ei.Metadata["permission"] != "resourcemanager.projects.getIamPolicy" || ei.Metadata["resource"] != "projects/p" {
		t.Fatalf("ErrorInfo %v", ei)
	}
	srv.FailNext(iamtest.MethodGetServiceAccount, 1, codes.PermissionDenied)
	name := "projects/p/serviceAccounts/a@p.iam.gserviceaccount.com"
	_, err = c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: name}, noRetry)
	if ei := info(err); ei.Domain != "iam.googleapis.com" || ei.Metadata["permission"] != "iam.serviceAccounts.get" || ei.Metadata["resource"] != name {
		t.Fatalf("ErrorInfo %v", ei)
	}
}

// TestRESTErrorsAsGAPICReads: a GAPIC REST client (which asks with
// $alt=json;enum-encoding=int) gets {code, message, status, details} only,
// which gax's apierror reads whole: its Reason is the ErrorInfo's. A
// discovery client's request still gets the legacy "errors" array.
func TestRESTErrorsAsGAPICReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c, err := resourcemanager.NewProjectsRESTClient(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv.FailNextWith(iamtest.MethodProjectsGetIamPolicy, 1,
		iamtest.PermissionDeniedError("resourcemanager.projects.getIamPolicy", "projects/p"))
	_, err = c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	var ae *apierror.APIError
	if !errors.As(err, &ae) || ae.Reason() != iamtest.ReasonPermissionDenied || ae.HTTPCode() != 403 ||
		ae.Metadata()["permission"] != "resourcemanager.projects.getIamPolicy" {
		t.Fatalf("GAPIC REST error %v: want reason %s with its metadata", err, iamtest.ReasonPermissionDenied)
	}

	for alt, wantErrors := range map[string]bool{"json;enum-encoding=int": false, "": true} {
		srv.FailNextWith(iamtest.MethodProjectsGetIamPolicy, 1,
			iamtest.PermissionDeniedError("resourcemanager.projects.getIamPolicy", "projects/p"))
		path := "v3/projects/p:getIamPolicy"
		if alt != "" {
			path += "?%24alt=" + url.QueryEscape(alt)
		}
		code, body := post(t, srv, path, `{}`)
		if code != 403 || strings.Contains(body, `"errors"`) != wantErrors || !strings.Contains(body, `"details"`) {
			t.Fatalf("$alt=%q: %d %s, want \"errors\" %v", alt, code, body, wantErrors)
		}
	}
}
