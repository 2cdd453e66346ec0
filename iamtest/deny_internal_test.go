package iamtest

import (
	"strings"
	"testing"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDenyPathDecoding follows google/api/http.proto for a variable of
// several segments: "The server side does the reverse decoding, except
// "%2F" and "%2f" are left unchanged."
func TestDenyPathDecoding(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/v2/policies/cloudresourcemanager.googleapis.com%252Fprojects%252Fp/denypolicies/x": "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/x",
		"/v2/policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/x":     "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/x",
		"/v2/policies/cloudresourcemanager.googleapis.com%2fprojects%2fp/denypolicies":       "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies",
		"//v2/policies/a%41b/denypolicies/x%2Ey":                                             "policies/aAb/denypolicies/x.y",
	} {
		if got, ok := denyName(in); !ok || got != want {
			t.Errorf("denyName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"/v1/policies/a/b", "/v2/policies/a%2/b", "/v2/policies/a//b", "/v2/policies/a%zz/b"} {
		if got, ok := denyName(in); ok {
			t.Errorf("denyName(%q) = %q, want no match", in, got)
		}
	}
}

// denyName is the name a GET of the deny face's path binds: GetPolicy's,
// or ListPolicies' parent.
func denyName(path string) (string, bool) {
	segs, custom := splitPath(path)
	for _, mi := range methodTable {
		if mi.name != MethodGetPolicy && mi.name != MethodListPolicies {
			continue
		}
		for _, r := range mi.rules {
			_, tmpl := httpPattern(r)
			rt, err := parseTemplate(tmpl)
			if err != nil {
				panic(err)
			}
			if vals, ok := rt.match(segs, custom); ok {
				return vals[0], true
			}
		}
	}
	return "", false
}

// TestDenyNames: canonical names keep %2F, name a registered project by
// number, and refuse other attachment points and kinds.
func TestDenyNames(t *testing.T) {
	t.Parallel()
	s := newRaw(t)
	defer s.Close()
	s.RegisterProject("my-project", 42)
	for in, want := range map[string]string{
		"policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/p-1": "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F42/denypolicies/p-1",
		"policies/cloudresourcemanager.googleapis.com%2fprojects%2f42/denypolicies/p.1":         "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F42/denypolicies/p.1",
		"policies/cloudresourcemanager.googleapis.com%2Forganizations%2F7/denypolicies/abc":     "policies/cloudresourcemanager.googleapis.com%2Forganizations%2F7/denypolicies/abc",
	} {
		if got, err := s.denyPolicyName(in); err != nil || got != want {
			t.Errorf("denyPolicyName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, code := range map[string]codes.Code{
		"policies/cloudresourcemanager.googleapis.com/projects/p/denypolicies/abc":            codes.InvalidArgument, // not URL-encoded
		"policies/cloudresourcemanager.googleapis.com%2Ffolders%2Fabc/denypolicies/abc":       codes.InvalidArgument,
		"policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/otherpolicies/abc":       codes.InvalidArgument,
		"policies/compute.googleapis.com%2Fprojects%2Fmy-project/denypolicies/abc":            codes.InvalidArgument,
		"policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/A": codes.NotFound,
		"abc": codes.InvalidArgument,
	} {
		if _, err := s.denyPolicyName(in); status.Code(err) != code {
			t.Errorf("denyPolicyName(%q): %v, want %v", in, err, code)
		}
	}
}

// TestDenyEtagsMove: every write mints an etag never seen before, in IAM's
// base64 "BwX..." shape.
func TestDenyEtagsMove(t *testing.T) {
	t.Parallel()
	s := newRaw(t)
	defer s.Close()
	name := "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/p-1"
	rule := &iamv2pb.PolicyRule{Kind: &iamv2pb.PolicyRule_DenyRule{DenyRule: &iamv2pb.DenyRule{
		DeniedPrincipals: []string{publicAllPrincipal}, DeniedPermissions: []string{"iam.googleapis.com/roles.list"}}}}
	seen := map[string]bool{}
	for range 5 {
		p, err := s.seedDenyPolicy(name, &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{rule}})
		if err != nil {
			t.Fatal(err)
		}
		if seen[p.GetEtag()] || !strings.HasPrefix(p.GetEtag(), "Bw") {
			t.Fatalf("etag %q: seen before, or not IAM's shape", p.GetEtag())
		}
		seen[p.GetEtag()] = true
		s.bumpDenyEtag(name)
		if e := s.DenyPolicy(name).GetEtag(); seen[e] {
			t.Fatalf("a concurrent write kept the etag %q", e)
		} else {
			seen[e] = true
		}
	}
}
