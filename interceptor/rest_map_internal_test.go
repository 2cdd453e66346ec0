package interceptor

import (
	"strings"
	"testing"
)

// TestRESTMappingAllocatesNothing: the RoundTripper maps every request that
// succeeds when metrics are on, so mapping must not allocate, whatever the
// host's case or the path's length; and neither changes the answer: a host
// in capitals maps as in lower case, and a path longer than any rule is
// still the IAM mixin when its last segment says so.
func TestRESTMappingAllocatesNothing(t *testing.T) {
	long := "/v1/" + strings.Repeat("a/", 20) + "b:getIamPolicy"
	for _, c := range []struct {
		verb, host, path string
		want             string // "" for no method
	}{
		{"POST", "cloudresourcemanager.googleapis.com", "/v3/projects/p:getIamPolicy", crm + "Projects/GetIamPolicy"},
		{"POST", "CloudResourceManager.GoogleAPIs.COM:443", "/v3/projects/p:getIamPolicy", crm + "Projects/GetIamPolicy"},
		{"GET", "IAM.googleapis.com", "/v1/projects/p/serviceAccounts/a", adminSvc + "GetServiceAccount"},
		{"POST", "cloudkms.googleapis.com", long, mixin + "GetIamPolicy"},
		{"GET", "example.com", "/" + strings.Repeat("a/", 40) + "b", ""},
		{"GET", "example.com", "/", ""},
	} {
		var (
			r  restRule
			ok bool
		)
		if n := testing.AllocsPerRun(100, func() { r, ok = restMethod(c.verb, c.host, c.path) }); n != 0 {
			t.Errorf("%s %s%s: %v allocations, want 0", c.verb, c.host, c.path, n)
		}
		if ok != (c.want != "") || r.method != c.want {
			t.Errorf("%s %s%s maps to %q (%v), want %q", c.verb, c.host, c.path, r.method, ok, c.want)
		}
	}
}
