package iammethods

import (
	"net/url"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// Rule maps an HTTP request to the gRPC method it transcodes to, so that
// a REST request is judged by the same safe-to-retry table as a gRPC call.
// The rules are the google.api.http rules of the IAM services, written out
// with the host they are served on (the rules carry none: the mixin's
// /v1/{resource=**}:getIamPolicy matches the admin service's paths too);
// interceptor/rest_internal_test.go checks them against the rules in the
// protos, which are linked into the test only.
type Rule struct {
	service string   // first DNS label of the service's googleapis.com host
	verb    string   // HTTP method
	path    []string // segments after the version; "*" is one segment
	custom  string   // custom verb after ':' on the last segment, or ""
	// Method is the full gRPC method name.
	Method string
	// Body builds the request message SafeToRetry reads (SetIamPolicy,
	// UpdateRole, UpdatePolicy, DeletePolicy: their etag and update mask),
	// from the JSON body and the URL. nil: the method needs none.
	Body func(body []byte, u *url.URL) any
}

const (
	adminSvc = "/google.iam.admin.v1.IAM/"
	creds    = "/google.iam.credentials.v1.IAMCredentials/"
	v2       = "/google.iam.v2.Policies/"
	ops      = "/google.longrunning.Operations/"
	crm      = "/google.cloud.resourcemanager.v3."
	mixin    = "/google.iam.v1.IAMPolicy/"
	sa       = "projects/*/serviceAccounts/*"
	saKeys   = sa + "/keys"
)

func rule(service, verb, path, method string) Rule {
	p, custom, _ := strings.Cut(path, ":")
	r := Rule{service: service, verb: verb, path: strings.Split(p, "/"), custom: custom, Method: method}
	switch {
	case strings.HasSuffix(method, "/SetIamPolicy"):
		r.Body = setIamPolicyBody
	case method == adminSvc+"UpdateRole":
		r.Body = updateRoleBody
	case method == v2+"UpdatePolicy":
		r.Body = updatePolicyBody
	case method == v2+"DeletePolicy":
		r.Body = deletePolicyBody
	}
	return r
}

// rules: the google.api.http rules of google.iam.admin.v1.IAM,
// google.iam.credentials.v1.IAMCredentials, google.iam.v2.Policies (and
// the polling of its operations) and the IAM methods of
// google.cloud.resourcemanager.v3 Projects, Folders and Organizations. The first rule that matches wins; where two services share
// a path (admin's and credentials' deprecated signBlob), both are equally
// safe.
var rules = []Rule{
	rule("iam", "POST", "v1/"+sa+":getIamPolicy", adminSvc+"GetIamPolicy"),
	rule("iam", "POST", "v1/"+sa+":setIamPolicy", adminSvc+"SetIamPolicy"),
	rule("iam", "POST", "v1/"+sa+":testIamPermissions", adminSvc+"TestIamPermissions"),
	rule("iam", "GET", "v1/projects/*/serviceAccounts", adminSvc+"ListServiceAccounts"),
	rule("iam", "POST", "v1/projects/*/serviceAccounts", adminSvc+"CreateServiceAccount"),
	rule("iam", "GET", "v1/"+sa, adminSvc+"GetServiceAccount"),
	rule("iam", "PUT", "v1/"+sa, adminSvc+"UpdateServiceAccount"),
	rule("iam", "PATCH", "v1/"+sa, adminSvc+"PatchServiceAccount"),
	rule("iam", "DELETE", "v1/"+sa, adminSvc+"DeleteServiceAccount"),
	rule("iam", "POST", "v1/"+sa+":undelete", adminSvc+"UndeleteServiceAccount"),
	rule("iam", "POST", "v1/"+sa+":enable", adminSvc+"EnableServiceAccount"),
	rule("iam", "POST", "v1/"+sa+":disable", adminSvc+"DisableServiceAccount"),
	rule("iam", "POST", "v1/"+sa+":signBlob", adminSvc+"SignBlob"),
	rule("iam", "POST", "v1/"+sa+":signJwt", adminSvc+"SignJwt"),
	rule("iam", "GET", "v1/"+saKeys, adminSvc+"ListServiceAccountKeys"),
	rule("iam", "POST", "v1/"+saKeys, adminSvc+"CreateServiceAccountKey"),
	rule("iam", "POST", "v1/"+saKeys+":upload", adminSvc+"UploadServiceAccountKey"),
	rule("iam", "GET", "v1/"+saKeys+"/*", adminSvc+"GetServiceAccountKey"),
	rule("iam", "DELETE", "v1/"+saKeys+"/*", adminSvc+"DeleteServiceAccountKey"),
	rule("iam", "POST", "v1/"+saKeys+"/*:disable", adminSvc+"DisableServiceAccountKey"),
	rule("iam", "POST", "v1/"+saKeys+"/*:enable", adminSvc+"EnableServiceAccountKey"),
	rule("iam", "POST", "v1/roles:queryGrantableRoles", adminSvc+"QueryGrantableRoles"),
	rule("iam", "GET", "v1/roles", adminSvc+"ListRoles"),
	rule("iam", "GET", "v1/roles/*", adminSvc+"GetRole"),
	rule("iam", "GET", "v1/projects/*/roles", adminSvc+"ListRoles"),
	rule("iam", "GET", "v1/organizations/*/roles", adminSvc+"ListRoles"),
	rule("iam", "GET", "v1/projects/*/roles/*", adminSvc+"GetRole"),
	rule("iam", "GET", "v1/organizations/*/roles/*", adminSvc+"GetRole"),
	rule("iam", "POST", "v1/projects/*/roles", adminSvc+"CreateRole"),
	rule("iam", "POST", "v1/organizations/*/roles", adminSvc+"CreateRole"),
	rule("iam", "PATCH", "v1/projects/*/roles/*", adminSvc+"UpdateRole"),
	rule("iam", "PATCH", "v1/organizations/*/roles/*", adminSvc+"UpdateRole"),
	rule("iam", "DELETE", "v1/projects/*/roles/*", adminSvc+"DeleteRole"),
	rule("iam", "DELETE", "v1/organizations/*/roles/*", adminSvc+"DeleteRole"),
	rule("iam", "POST", "v1/projects/*/roles/*:undelete", adminSvc+"UndeleteRole"),
	rule("iam", "POST", "v1/organizations/*/roles/*:undelete", adminSvc+"UndeleteRole"),
	rule("iam", "POST", "v1/permissions:queryTestablePermissions", adminSvc+"QueryTestablePermissions"),
	rule("iam", "POST", "v1/iamPolicies:queryAuditableServices", adminSvc+"QueryAuditableServices"),
	rule("iam", "POST", "v1/iamPolicies:lintPolicy", adminSvc+"LintPolicy"),

	rule("iamcredentials", "POST", "v1/"+sa+":generateAccessToken", creds+"GenerateAccessToken"),
	rule("iamcredentials", "POST", "v1/"+sa+":generateIdToken", creds+"GenerateIdToken"),
	rule("iamcredentials", "POST", "v1/"+sa+":signBlob", creds+"SignBlob"),
	rule("iamcredentials", "POST", "v1/"+sa+":signJwt", creds+"SignJwt"),

	rule("iam", "GET", "v2/policies/*/*", v2+"ListPolicies"),
	rule("iam", "POST", "v2/policies/*/*", v2+"CreatePolicy"),
	rule("iam", "GET", "v2/policies/*/*/*", v2+"GetPolicy"),
	rule("iam", "PUT", "v2/policies/*/*/*", v2+"UpdatePolicy"),
	rule("iam", "DELETE", "v2/policies/*/*/*", v2+"DeletePolicy"),
	// The operations of v2's writes, polled by the GAPIC and discovery
	// clients alike (iam_v2.yaml's rule for google.longrunning.Operations).
	rule("iam", "GET", "v2/policies/*/*/*/operations/*", ops+"GetOperation"),

	rule("cloudresourcemanager", "POST", "v3/projects/*:getIamPolicy", crm+"Projects/GetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/projects/*:setIamPolicy", crm+"Projects/SetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/projects/*:testIamPermissions", crm+"Projects/TestIamPermissions"),
	rule("cloudresourcemanager", "POST", "v3/folders/*:getIamPolicy", crm+"Folders/GetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/folders/*:setIamPolicy", crm+"Folders/SetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/folders/*:testIamPermissions", crm+"Folders/TestIamPermissions"),
	rule("cloudresourcemanager", "POST", "v3/organizations/*:getIamPolicy", crm+"Organizations/GetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/organizations/*:setIamPolicy", crm+"Organizations/SetIamPolicy"),
	rule("cloudresourcemanager", "POST", "v3/organizations/*:testIamPermissions", crm+"Organizations/TestIamPermissions"),
}

// mixinRules: the IAM mixin (google.iam.v1.IAMPolicy), which every service
// with IAM policies serves as POST /VERSION/{resource=**}:getIamPolicy (some
// older APIs read with GET).
var mixinRules = map[string]Rule{
	"getIamPolicy":       {Method: mixin + "GetIamPolicy"},
	"setIamPolicy":       {Method: mixin + "SetIamPolicy", Body: setIamPolicyBody},
	"testIamPermissions": {Method: mixin + "TestIamPermissions"},
}

// REST returns the rule of the gRPC method an HTTP request transcodes
// to. On a googleapis.com host (iam.googleapis.com, its mTLS and regional
// forms) only the rules of that service apply; on any other host (a private
// endpoint, a test server) the first rule whose path matches. A request
// that matches no rule of the IAM services but whose last segment ends in
// :getIamPolicy, :setIamPolicy or :testIamPermissions is the IAM mixin.
// ok is false for everything else.
func REST(verb, host, path string) (Rule, bool) {
	// Mapping a request allocates nothing (the RoundTripper's success path
	// maps every request when metrics are on): the host is compared without
	// case folding into a new string, the segments go to an array on the
	// stack.
	service := ""
	if h := hostOnly(host); hasSuffixFold(h, ".googleapis.com") {
		service, _, _ = strings.Cut(h, ".")
	}
	var buf [16]string
	segs, whole := splitPath(buf[:], strings.TrimLeft(path, "/"))
	last := segs[len(segs)-1]
	custom := ""
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		segs[len(segs)-1], custom = last[:i], last[i+1:]
	}
	if whole {
		for i := range rules {
			r := &rules[i] // not a copy of the rule per iteration
			if len(r.path) == len(segs) && r.custom == custom && r.verb == verb &&
				(service == "" || strings.EqualFold(service, r.service)) && segsMatch(r.path, segs) {
				return *r, true
			}
		}
	}
	if m, ok := mixinRules[custom]; ok && (verb == "POST" || verb == "GET") && len(segs) >= 2 {
		return m, true
	}
	return Rule{}, false
}

// splitPath splits path at "/" as strings.Split would, into buf. A path of
// more segments than buf holds keeps its first len(buf)-1 and, in the last
// slot, its last one, and whole is false: no rule is that long, and the
// mixin reads only the last segment.
func splitPath(buf []string, path string) (segs []string, whole bool) {
	n := 0
	whole = true
	for {
		seg, rest, more := strings.Cut(path, "/")
		if n < len(buf) {
			n++
		} else {
			whole = false
		}
		buf[n-1] = seg
		if !more {
			return buf[:n], whole
		}
		path = rest
	}
}

func segsMatch(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		if segs[i] == "" || (p != "*" && p != segs[i]) {
			return false
		}
	}
	return true
}

// hostOnly is host without its port, its case kept (compare it with
// strings.EqualFold).
func hostOnly(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	return host
}

// hasSuffixFold is strings.HasSuffix under ASCII case folding (suffix is
// ASCII).
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// jsonIn reads the JSON bodies of both the discovery clients and the GAPIC
// REST clients (which write enums as numbers); unknown fields are skipped.
var jsonIn = protojson.UnmarshalOptions{DiscardUnknown: true, AllowPartial: true}

func setIamPolicyBody(body []byte, _ *url.URL) any {
	req := new(iampb.SetIamPolicyRequest)
	if jsonIn.Unmarshal(body, req) != nil {
		return nil
	}
	return req
}

// updateRoleBody: PATCH /v1/{name=projects/*/roles/*} with the Role as the
// body and the update mask in the query.
func updateRoleBody(body []byte, u *url.URL) any {
	role := new(adminpb.Role)
	if jsonIn.Unmarshal(body, role) != nil {
		return nil
	}
	req := &adminpb.UpdateRoleRequest{Role: role}
	if m := u.Query().Get("updateMask"); m != "" {
		req.UpdateMask = &fieldmaskpb.FieldMask{Paths: strings.Split(m, ",")}
	}
	return req
}

// updatePolicyBody: PUT /v2/{policy.name=policies/*/*/*} with the Policy as
// the body.
func updatePolicyBody(body []byte, _ *url.URL) any {
	p := new(iamv2pb.Policy)
	if jsonIn.Unmarshal(body, p) != nil {
		return nil
	}
	return &iamv2pb.UpdatePolicyRequest{Policy: p}
}

// deletePolicyBody: DELETE /v2/{name=policies/*/*/*} with the etag, when
// given, in the query (?etag=...); there is no body.
func deletePolicyBody(_ []byte, u *url.URL) any {
	return &iamv2pb.DeletePolicyRequest{Name: u.Path, Etag: u.Query().Get("etag")}
}
