package interceptor

import (
	"slices"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"

	"github.com/iamretry/iamretry/internal/iammethods"
)

// SafeToRetry is the default answer to "may this request, whose first attempt
// may have committed, be sent again?" for a full gRPC method and its request
// (or nil). Reads (Get, List, Search, Query, Test, Lint, BatchGet) are; etag
// writes (SetIamPolicy, UpdateRole, v2's UpdatePolicy, DeletePolicy) only with
// an etag the server checks (update_mask empty or naming etag); deletes,
// undeletes, enables, disables, a service account's name or description are;
// creates are not, CreateServiceAccountKey never; IAMCredentials and
// Operations calls are; REST "VERB /path" only for GET and HEAD. It is pure
// and allocates nothing: a WithSafeToRetry function may call it.
func SafeToRetry(method string, req any) bool {
	if verb, path, ok := strings.Cut(method, " "); ok && verb != "" && strings.HasPrefix(path, "/") {
		// A REST request that maps to no gRPC method (the RoundTripper's
		// "VERB /path"): HTTP's safe methods.
		return verb == "GET" || verb == "HEAD"
	}
	// "/" service "/" name, both non-empty, nothing else.
	if len(method) < 4 || method[0] != '/' {
		return false
	}
	slash := strings.IndexByte(method[1:], '/') + 1
	if slash <= 1 || slash == len(method)-1 {
		return false
	}
	name := method[slash+1:]
	if strings.IndexByte(name, '/') >= 0 {
		return false
	}
	switch safeMethods[method] {
	case iammethods.Always:
		return true
	case iammethods.Never:
		return false
	case iammethods.IfPolicyEtag:
		return setIamPolicyChecksEtag(req)
	case iammethods.IfRoleEtag:
		r, ok := req.(*adminpb.UpdateRoleRequest)
		return ok && len(r.GetRole().GetEtag()) > 0 && maskChecksEtag(r.GetUpdateMask().GetPaths())
	case iammethods.IfDenyPolicyEtag:
		r, ok := req.(*iamv2pb.UpdatePolicyRequest)
		return ok && r.GetPolicy().GetEtag() != ""
	case iammethods.IfDeleteEtag:
		r, ok := req.(*iamv2pb.DeletePolicyRequest)
		return ok && r.GetEtag() != ""
	}
	// Not in the table: a service we do not know, or a method newer than the
	// protos this table was written against.
	if name == "SetIamPolicy" {
		return setIamPolicyChecksEtag(req)
	}
	return hasReadVerb(name)
}

// setIamPolicyChecksEtag reports whether req is a SetIamPolicy request that
// IAM checks against the current etag: its policy carries an etag and its
// update_mask is empty or names etag. A replay of such a write that landed
// fails ABORTED instead of overwriting a concurrent change.
func setIamPolicyChecksEtag(req any) bool {
	r, ok := req.(*iampb.SetIamPolicyRequest)
	return ok && len(r.GetPolicy().GetEtag()) > 0 && maskChecksEtag(r.GetUpdateMask().GetPaths())
}

// maskChecksEtag reports whether an update_mask leaves the etag check on:
// it is empty (IAM's default mask includes etag) or one of its paths is
// "etag".
func maskChecksEtag(paths []string) bool {
	return len(paths) == 0 || slices.Contains(paths, "etag")
}

// safeReadVerbs are the leading words of method names that only read.
var safeReadVerbs = [...]string{"Get", "List", "Search", "Query", "Test", "Lint", "BatchGet"}

// hasReadVerb reports whether name starts with a read verb as a whole CamelCase
// word: the verb is the whole name or is followed by an upper-case letter.
func hasReadVerb(name string) bool {
	for _, v := range safeReadVerbs {
		if strings.HasPrefix(name, v) && (len(name) == len(v) || isASCIIUpper(name[len(v)])) {
			return true
		}
	}
	return false
}

func isASCIIUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// safeMethods is the IAM method table (internal/iammethods): SafeToRetry
// and the metrics read it.
var safeMethods = iammethods.Safety

// safeUnknown is the table's verdict on a method it does not hold.
const safeUnknown = iammethods.Unknown
