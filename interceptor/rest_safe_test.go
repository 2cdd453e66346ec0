package interceptor_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// Issue 24, item 4, over REST: the deny policies of google.iam.v2 (and the
// polling of their operations) and the custom roles of the admin API get
// the decisions of SafeToRetry's table (safe_test.go): each request is
// mapped by host and path to its method and read from its URL and body as
// the RoundTripper reads it; a 503 is retried exactly when the request is
// safe to replay.
func TestRESTSafeDenyPoliciesAndCustomRoles(t *testing.T) {
	t.Parallel()
	const policy = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F123/denypolicies/p"
	for _, c := range []struct {
		verb, url, body string
		method          string
		want            bool
	}{
		{"DELETE", "https://iam.googleapis.com/v2/" + policy + "?etag=W%2F%221%22", "", "/google.iam.v2.Policies/DeletePolicy", true},
		{"DELETE", "https://iam.googleapis.com/v2/" + policy, "", "/google.iam.v2.Policies/DeletePolicy", false},
		// The GAPIC and discovery clients escape the name's own %2F again.
		{"DELETE", "https://iam.googleapis.com/v2/" + strings.ReplaceAll(policy, "%2F", "%252F") + "?etag=x", "", "/google.iam.v2.Policies/DeletePolicy", true},
		{"GET", "https://iam.googleapis.com/v2/" + strings.ReplaceAll(policy, "%2F", "%252F") + "/operations/o", "", "/google.longrunning.Operations/GetOperation", true},
		{"DELETE", "https://iam.googleapis.com/v2/" + policy + "?etag=", "", "/google.iam.v2.Policies/DeletePolicy", false},
		{"PUT", "https://iam.googleapis.com/v2/" + policy, `{"name":"` + policy + `","etag":"W/\"1\""}`, "/google.iam.v2.Policies/UpdatePolicy", true},
		{"PUT", "https://iam.googleapis.com/v2/" + policy, `{"name":"` + policy + `"}`, "/google.iam.v2.Policies/UpdatePolicy", false},
		{"POST", "https://iam.googleapis.com/v2/policies/cloudresourcemanager.googleapis.com%2Fprojects%2F123/denypolicies?policyId=p", `{}`, "/google.iam.v2.Policies/CreatePolicy", false},
		{"GET", "https://iam.googleapis.com/v2/" + policy, "", "/google.iam.v2.Policies/GetPolicy", true},
		{"GET", "https://iam.googleapis.com/v2/" + policy + "/operations/op1", "", "/google.longrunning.Operations/GetOperation", true},
		{"GET", "http://127.0.0.1:8086/v2/" + policy + "/operations/op1", "", "/google.longrunning.Operations/GetOperation", true},
		{"PATCH", "https://iam.googleapis.com/v1/projects/p/roles/r?updateMask=includedPermissions,etag", `{"includedPermissions":["a.b.c"],"etag":"BwXhqDkT0mQ="}`, "/google.iam.admin.v1.IAM/UpdateRole", true},
		{"PATCH", "https://iam.googleapis.com/v1/organizations/1/roles/r", `{"includedPermissions":["a.b.c"],"etag":"BwXhqDkT0mQ="}`, "/google.iam.admin.v1.IAM/UpdateRole", true},
		{"PATCH", "https://iam.googleapis.com/v1/projects/p/roles/r?updateMask=includedPermissions", `{"includedPermissions":["a.b.c"],"etag":"BwXhqDkT0mQ="}`, "/google.iam.admin.v1.IAM/UpdateRole", false},
		{"PATCH", "https://iam.googleapis.com/v1/projects/p/roles/r", `{"includedPermissions":["a.b.c"]}`, "/google.iam.admin.v1.IAM/UpdateRole", false},
		{"POST", "https://iam.googleapis.com/v1/projects/p/roles", `{"roleId":"r","role":{}}`, "/google.iam.admin.v1.IAM/CreateRole", false},
		{"DELETE", "https://iam.googleapis.com/v1/projects/p/roles/r", "", "/google.iam.admin.v1.IAM/DeleteRole", true},
		{"POST", "https://iam.googleapis.com/v1/projects/p/roles/r:undelete", `{}`, "/google.iam.admin.v1.IAM/UndeleteRole", true},
		{"GET", "https://iam.googleapis.com/v1/roles/viewer", "", "/google.iam.admin.v1.IAM/GetRole", true},
		{"GET", "https://iam.googleapis.com/v1/organizations/1/roles", "", "/google.iam.admin.v1.IAM/ListRoles", true},
		{"POST", "https://iam.googleapis.com/v1/roles:queryGrantableRoles", `{}`, "/google.iam.admin.v1.IAM/QueryGrantableRoles", true},
	} {
		req, err := http.NewRequest(c.verb, c.url, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var sent atomic.Int32
		base := roundTripFunc(func(*http.Request) (*http.Response, error) {
			if sent.Add(1) == 1 {
				return jsonAnswer(http.StatusServiceUnavailable, "UNAVAILABLE"), nil
			}
			return jsonAnswer(http.StatusOK, ""), nil
		})
		var method string
		r := restRetrier(t, vclock.New(), interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.N == 1 {
				method = a.Method
			}
		}))
		resp, err := r.RoundTripper(base).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if method != c.method {
			t.Errorf("%s %s maps to %q, want %s", c.verb, c.url, method, c.method)
		}
		if retried := sent.Load() == 2; retried != c.want {
			t.Errorf("%s %s %s: 503 retried %v, want %v", c.verb, c.url, c.body, retried, c.want)
		}
	}
}
