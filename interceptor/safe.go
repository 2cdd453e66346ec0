package interceptor

import (
	"slices"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"

	"github.com/iamretry/iamretry/internal/iammethods"
)

// SafeToRetry is the default answer to "may this request be sent again after a
// transient failure?". method is the full gRPC method name
// ("/google.iam.admin.v1.IAM/GetServiceAccount"), req the request message (nil
// or of any type).
//
// The question is not whether the error is transient (package codes answers
// that) but whether a replay is harmless when the first attempt committed and
// only its answer was lost. The rules:
//
//   - Reads are safe: every read of the IAM services below, and, for any other
//     method, a name whose first CamelCase word is a read verb: Get, List,
//     Search, Query, Test, Lint, or BatchGet ("GetFoo" and "Get" count,
//     "Getaway" does not).
//   - SetIamPolicy, in any service, is safe only when req is a
//     *iampb.SetIamPolicyRequest whose policy carries a non-empty etag AND
//     whose update_mask is empty (IAM's default, "bindings,etag") or names
//     "etag": a replay of a write that already landed then fails ABORTED
//     instead of overwriting whatever changed in between. With a mask that
//     leaves out etag (["bindings"]) IAM need not check the etag, and without
//     an etag there is nothing to check: the replay is a blind overwrite of
//     the whole policy that could undo a concurrent grant or revocation. The
//     same holds for the admin API's UpdateRole (the role's permission list:
//     an etag and an update_mask that is empty or names etag; the proto says
//     only that the etag is "used to perform a consistent read-modify-write",
//     so a mask that leaves it out is not taken on trust) and google.iam.v2's
//     UpdatePolicy (the deny rules, no mask): safe only with an etag. So is
//     v2's DeletePolicy: without an etag it "deletes the policy regardless
//     of its current etag", and a late replay could delete a policy of the
//     same name created in between.
//   - Writes that put one resource into one named state (Delete*, Undelete*,
//     Enable*, Disable*, and the display-name/description updates of service
//     accounts) are safe in the IAM admin service: a replay carries nothing
//     read earlier and only re-asserts the caller's own request, as if it had
//     arrived later within the same call. A replayed delete may answer
//     NOT_FOUND for the caller's own success: the state it asked for. A
//     custom role's DeleteRole and UndeleteRole are safe with or without an
//     etag: a deleted role's ID is not given to a new role, so a replay can
//     only delete or restore the same role again (a replayed undelete that
//     landed may answer that the role is not deleted: the state asked for).
//   - Creates (and UploadServiceAccountKey) are not safe: a replay of a create
//     that landed answers ALREADY_EXISTS for the caller's own resource, which a
//     caller cannot tell from a name taken by someone else (a caller that
//     knows the name is its own may retry ALREADY_EXISTS as success itself).
//     This holds for CreateRole and v2's CreatePolicy too.
//     CreateServiceAccountKey is never safe: each call mints a new private key,
//     and a key whose answer was lost is a live credential nobody holds.
//   - Every IAM Service Account Credentials call (access and ID tokens, blob
//     and JWT signatures) is safe: each mints or signs without keeping state on
//     the server.
//   - google.longrunning.Operations, which polls the long-running operations
//     of v2's writes (GetOperation), is safe: its reads and waits read, and
//     Cancel and Delete set the one operation they name to one state.
//   - A REST request the RoundTripper maps to no gRPC method is named
//     "VERB /path" (as Attempt.Method reports it): GET and HEAD are safe,
//     nothing else is (req is then its *http.Request).
//   - Any other method is not safe, and neither is a malformed method name (no
//     leading slash, an empty service or method name).
//
// Every method of google.iam.v1.IAMPolicy, google.iam.admin.v1.IAM,
// google.iam.credentials.v1.IAMCredentials, google.iam.v2.Policies and
// google.longrunning.Operations is decided explicitly, method by method, in
// this package's method table (which is also the metrics' method table:
// each of its methods has a grpc.method value of its own).
//
// SafeToRetry is pure, does not allocate, and is safe for concurrent use. To
// change the answer, pass a function of your own with WithSafeToRetry; it can
// call SafeToRetry for the methods it does not decide itself.
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
