package interceptor

import (
	"slices"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
)

// SafeToRetry is the default answer to "may this request be sent again after
// an ambiguous failure, when the first attempt may have committed?". method
// is the full gRPC method name ("/google.iam.admin.v1.IAM/GetServiceAccount"),
// req the request message (nil or of any type). Reads are safe; an etag
// write (SetIamPolicy, UpdateRole, v2's UpdatePolicy) only with an etag the
// server checks; creates are not, and CreateServiceAccountKey never is. The
// package doc's "Which requests are safe to retry" gives every rule.
//
// It is pure, does not allocate, and is safe for concurrent use. To change
// the answer, pass a function of your own with WithSafeToRetry; it can call
// SafeToRetry for the methods it does not decide itself.
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
	case safeAlways:
		return true
	case safeNever:
		return false
	case safeIfPolicyEtag:
		return setIamPolicyChecksEtag(req)
	case safeIfRoleEtag:
		r, ok := req.(*adminpb.UpdateRoleRequest)
		return ok && len(r.GetRole().GetEtag()) > 0 && maskChecksEtag(r.GetUpdateMask().GetPaths())
	case safeIfDenyPolicyEtag:
		r, ok := req.(*iamv2pb.UpdatePolicyRequest)
		return ok && r.GetPolicy().GetEtag() != ""
	case safeIfDeleteEtag:
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

// safeVerdict is what safeMethods says about a method.
type safeVerdict uint8

const (
	safeUnknown          safeVerdict = iota // not in the table: decide by the name
	safeNever                               // not safe to replay
	safeAlways                              // safe to replay
	safeIfPolicyEtag                        // safe when the SetIamPolicyRequest's policy has an etag and its mask is empty or names etag
	safeIfRoleEtag                          // safe when the UpdateRoleRequest's role has an etag and its mask is empty or names etag
	safeIfDenyPolicyEtag                    // safe when the v2 UpdatePolicyRequest's policy has an etag
	safeIfDeleteEtag                        // safe when the v2 DeletePolicyRequest has an etag
)

// safeMethods decides every method of the IAM services, one by one, each for
// a stated reason. safe_test.go fails when one of these services gains a
// method that is missing here.
var safeMethods = map[string]safeVerdict{
	// google.iam.v1.IAMPolicy, the IAM mixin.
	"/google.iam.v1.IAMPolicy/GetIamPolicy":       safeAlways,       // read
	"/google.iam.v1.IAMPolicy/SetIamPolicy":       safeIfPolicyEtag, // blind overwrite of the whole policy unless the etag makes a late replay fail ABORTED
	"/google.iam.v1.IAMPolicy/TestIamPermissions": safeAlways,       // read

	// google.iam.admin.v1.IAM: all 31 methods.
	"/google.iam.admin.v1.IAM/ListServiceAccounts":      safeAlways,       // read
	"/google.iam.admin.v1.IAM/GetServiceAccount":        safeAlways,       // read
	"/google.iam.admin.v1.IAM/CreateServiceAccount":     safeNever,        // no duplicate, but a replay of a create that landed answers ALREADY_EXISTS for the caller's own account, indistinguishable from a name taken by someone else
	"/google.iam.admin.v1.IAM/UpdateServiceAccount":     safeAlways,       // sets only the display name to the caller's value; its etag is deprecated, nothing read earlier is written back
	"/google.iam.admin.v1.IAM/PatchServiceAccount":      safeAlways,       // sets display name/description named by the update mask to the caller's values; a replay re-asserts them
	"/google.iam.admin.v1.IAM/DeleteServiceAccount":     safeAlways,       // state-setting; a replay after a lost success gets NOT_FOUND, which is the state asked for (address by unique ID to rule out hitting a re-created email)
	"/google.iam.admin.v1.IAM/UndeleteServiceAccount":   safeAlways,       // state-setting: a replay can only restore the same account again (it may answer that it is not deleted)
	"/google.iam.admin.v1.IAM/EnableServiceAccount":     safeAlways,       // state-setting; documented no-op when already enabled
	"/google.iam.admin.v1.IAM/DisableServiceAccount":    safeAlways,       // state-setting; disabling twice leaves it disabled
	"/google.iam.admin.v1.IAM/ListServiceAccountKeys":   safeAlways,       // read
	"/google.iam.admin.v1.IAM/GetServiceAccountKey":     safeAlways,       // read
	"/google.iam.admin.v1.IAM/CreateServiceAccountKey":  safeNever,        // NEVER: each call mints a new private key; a retry after a lost answer leaks a live key and spends the 10-key quota
	"/google.iam.admin.v1.IAM/UploadServiceAccountKey":  safeNever,        // creates a key resource: a replay of an upload that landed is at best refused as a duplicate of the caller's own key (no secret leaks: callers may opt in)
	"/google.iam.admin.v1.IAM/DeleteServiceAccountKey":  safeAlways,       // state-setting on the one key it names; a replay after a lost success gets NOT_FOUND, which means it is gone
	"/google.iam.admin.v1.IAM/DisableServiceAccountKey": safeAlways,       // state-setting
	"/google.iam.admin.v1.IAM/EnableServiceAccountKey":  safeAlways,       // state-setting
	"/google.iam.admin.v1.IAM/SignBlob":                 safeAlways,       // deprecated; signing the same bytes again changes nothing on the server
	"/google.iam.admin.v1.IAM/SignJwt":                  safeAlways,       // deprecated; signing the same claims again changes nothing on the server
	"/google.iam.admin.v1.IAM/GetIamPolicy":             safeAlways,       // read
	"/google.iam.admin.v1.IAM/SetIamPolicy":             safeIfPolicyEtag, // same rule as IAMPolicy.SetIamPolicy
	"/google.iam.admin.v1.IAM/TestIamPermissions":       safeAlways,       // read
	"/google.iam.admin.v1.IAM/QueryGrantableRoles":      safeAlways,       // read
	"/google.iam.admin.v1.IAM/ListRoles":                safeAlways,       // read
	"/google.iam.admin.v1.IAM/GetRole":                  safeAlways,       // read
	"/google.iam.admin.v1.IAM/CreateRole":               safeNever,        // like CreateServiceAccount: a replay of a create that landed answers ALREADY_EXISTS for the caller's own role
	"/google.iam.admin.v1.IAM/UpdateRole":               safeIfRoleEtag,   // writes a whole permission list (a replay could re-add a permission removed in between) unless the role's etag makes it fail ABORTED
	"/google.iam.admin.v1.IAM/DeleteRole":               safeAlways,       // state-setting (soft delete): a deleted role's ID is not reused, so a replay can only find the same role deleted (or delete it again if someone undeleted it in between, as a later request would); an etag in the request still applies
	"/google.iam.admin.v1.IAM/UndeleteRole":             safeAlways,       // state-setting: within the 7 days a role can be undeleted its ID is not reused, so a replay can only restore the same role; one whose first attempt landed may answer that the role is not deleted, the state asked for
	"/google.iam.admin.v1.IAM/QueryTestablePermissions": safeAlways,       // read
	"/google.iam.admin.v1.IAM/QueryAuditableServices":   safeAlways,       // read
	"/google.iam.admin.v1.IAM/LintPolicy":               safeAlways,       // validates a policy it is given; stores nothing

	// google.iam.credentials.v1.IAMCredentials: each call mints a short-lived
	// token or a signature and keeps no state on the server, so a replay at
	// worst leaves an unused token to expire.
	"/google.iam.credentials.v1.IAMCredentials/GenerateAccessToken": safeAlways, // mints a short-lived token, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/GenerateIdToken":     safeAlways, // mints a short-lived token, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/SignBlob":            safeAlways, // signs, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/SignJwt":             safeAlways, // signs, no server-side state

	// google.iam.v2.Policies (deny policies). The writes start long-running
	// operations; replaying the start is as safe as the operation itself. A
	// replay whose first answer was lost also loses that operation's name.
	"/google.iam.v2.Policies/ListPolicies": safeAlways,           // read
	"/google.iam.v2.Policies/GetPolicy":    safeAlways,           // read
	"/google.iam.v2.Policies/CreatePolicy": safeNever,            // create: a replay of one that landed answers ALREADY_EXISTS for the caller's own policy
	"/google.iam.v2.Policies/UpdatePolicy": safeIfDenyPolicyEtag, // writes the whole rule set: safe only when the etag makes a late replay fail ABORTED
	"/google.iam.v2.Policies/DeletePolicy": safeIfDeleteEtag,     // without an etag IAM "deletes the policy regardless of its current etag": a late replay could delete a policy of the same name created in between; with one it fails ABORTED instead

	// google.longrunning.Operations: how v2's writes (and other APIs'
	// long-running operations) are polled.
	"/google.longrunning.Operations/ListOperations":  safeAlways, // read
	"/google.longrunning.Operations/GetOperation":    safeAlways, // read: polling an operation
	"/google.longrunning.Operations/WaitOperation":   safeAlways, // read: waits for the operation, changes nothing
	"/google.longrunning.Operations/CancelOperation": safeAlways, // state-setting on the one operation it names: cancelling twice leaves it cancelled
	"/google.longrunning.Operations/DeleteOperation": safeAlways, // state-setting: the caller no longer wants the result; a replay after a lost success gets NOT_FOUND
}
