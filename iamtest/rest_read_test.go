package iamtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/type/expr"

	"github.com/iamretry/iamretry/iamtest"
)

// post sends body to the REST face and returns the status and body.
func post(t *testing.T, srv *iamtest.Server, path, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.RESTEndpoint()+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRESTUnknownJSONName: a JSON name that is no field of the request is
// refused 400 "Invalid JSON payload received. Unknown name ..." with a
// google.rpc.BadRequest, as Google's front end answers hand-written JSON
// (the message users quote from curl and Terraform), at the top and nested.
func TestRESTUnknownJSONName(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	code, body := post(t, srv, "v3/projects/p:setIamPolicy", `{"policy": {"bindings": [], "etagg": "BwX="}}`)
	if code != 400 || !strings.Contains(body, `Invalid JSON payload received. Unknown name \"etagg\" at 'policy': Cannot find field.`) ||
		!strings.Contains(body, "google.rpc.BadRequest") {
		t.Fatalf("nested: %d %s", code, body)
	}
	code, body = post(t, srv, "v1/projects/p/serviceAccounts", `{"accountId": "robot-one", "displayName": "top-level, not in serviceAccount"}`)
	if code != 400 || !strings.Contains(body, `Unknown name \"displayName\": Cannot find field.`) {
		t.Fatalf("top: %d %s", code, body)
	}
	if code, body := post(t, srv, "v1/projects/p/serviceAccounts", `{"account_id": "robot-one", "serviceAccount": {"display_name": "proto names are fields too"}}`); code != 200 {
		t.Fatalf("proto names: %d %s", code, body)
	}
}

// TestRESTFieldsSelection: fields= returns only the selected fields
// (https://cloud.google.com/apis/docs/system-parameters: "fields ... Selector
// specifying which fields to include in a partial response"), so code that
// leaves etag out of its selection and writes the policy back writes blind,
// in tests as in production.
func TestRESTFieldsSelection(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	svc, err := crm.NewService(context.Background(), srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := newClients(t, srv).grant("projects/p", "roles/viewer", "user:a@example.com"); err != nil {
		t.Fatal(err)
	}
	p, err := svc.Projects.GetIamPolicy("projects/p", &crm.GetIamPolicyRequest{}).Fields("bindings(role)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if p.Etag != "" || p.Version != 0 || len(p.Bindings) != 1 || p.Bindings[0].Role != "roles/viewer" || p.Bindings[0].Members != nil {
		t.Fatalf("selected %+v", p)
	}
	full, err := svc.Projects.GetIamPolicy("projects/p", &crm.GetIamPolicyRequest{}).Fields("bindings,etag").Do()
	if err != nil || full.Etag == "" || len(full.Bindings[0].Members) != 1 {
		t.Fatalf("bindings,etag: %+v, %v", full, err)
	}
	_, err = svc.Projects.GetIamPolicy("projects/p", &crm.GetIamPolicyRequest{}).Fields("bindings(").Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 400 {
		t.Fatalf("a bad selection: %v", err)
	}
}

// TestRESTQueryOnBodyMethod: a query parameter naming a field of a body: "*"
// method is not bound by default (google/api/http.proto: "when using `*` in
// the body mapping, it is not possible to have HTTP parameters"; the live
// answer is unverified), and is with SetRESTQueryBindsBodyFields.
func TestRESTQueryOnBodyMethod(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	srv.SeedPolicy("projects/p", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{{Role: "roles/browser",
		Members: []string{"user:a@example.com"}, Condition: &expr.Expr{Title: "t", Expression: "true"}}}})
	const path = "v3/projects/p:getIamPolicy?options.requestedPolicyVersion=3"
	if code, body := post(t, srv, path, `{}`); code != 400 {
		t.Fatalf("not bound (a version-1 read of a conditional policy is refused): %d %s", code, body)
	}
	srv.SetRESTQueryBindsBodyFields(true)
	code, body := post(t, srv, path, `{}`)
	var got struct{ Version int }
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.Version != 3 {
		t.Fatalf("bound: %d %s", code, body)
	}
}
