package iammethods

// Verdict is what Safety says about a method: whether a request of it may
// be sent again after an ambiguous failure (interceptor.SafeToRetry).
type Verdict uint8

const (
	Unknown          Verdict = iota // not in the table: decide by the name
	Never                           // not safe to replay
	Always                          // safe to replay
	IfPolicyEtag                    // safe when the SetIamPolicyRequest's policy has an etag and its mask is empty or names etag
	IfRoleEtag                      // safe when the UpdateRoleRequest's role has an etag and its mask is empty or names etag
	IfDenyPolicyEtag                // safe when the v2 UpdatePolicyRequest's policy has an etag
	IfDeleteEtag                    // safe when the v2 DeletePolicyRequest has an etag
)

// Safety decides every method of the IAM services, one by one, each for
// a stated reason. It is also the metrics' method table: each of its
// methods has a grpc.method value of its own. interceptor/safe_test.go
// fails when one of these services gains a method that is missing here.
var Safety = map[string]Verdict{
	// google.iam.v1.IAMPolicy, the IAM mixin.
	"/google.iam.v1.IAMPolicy/GetIamPolicy":       Always,       // read
	"/google.iam.v1.IAMPolicy/SetIamPolicy":       IfPolicyEtag, // blind overwrite of the whole policy unless the etag makes a late replay fail ABORTED
	"/google.iam.v1.IAMPolicy/TestIamPermissions": Always,       // read

	// google.iam.admin.v1.IAM: all 31 methods.
	"/google.iam.admin.v1.IAM/ListServiceAccounts":      Always,       // read
	"/google.iam.admin.v1.IAM/GetServiceAccount":        Always,       // read
	"/google.iam.admin.v1.IAM/CreateServiceAccount":     Never,        // no duplicate, but a replay of a create that landed answers ALREADY_EXISTS for the caller's own account, indistinguishable from a name taken by someone else
	"/google.iam.admin.v1.IAM/UpdateServiceAccount":     Always,       // sets only the display name to the caller's value; its etag is deprecated, nothing read earlier is written back
	"/google.iam.admin.v1.IAM/PatchServiceAccount":      Always,       // sets display name/description named by the update mask to the caller's values; a replay re-asserts them
	"/google.iam.admin.v1.IAM/DeleteServiceAccount":     Always,       // state-setting; a replay after a lost success gets NOT_FOUND, which is the state asked for (address by unique ID to rule out hitting a re-created email)
	"/google.iam.admin.v1.IAM/UndeleteServiceAccount":   Always,       // state-setting: a replay can only restore the same account again (it may answer that it is not deleted)
	"/google.iam.admin.v1.IAM/EnableServiceAccount":     Always,       // state-setting; documented no-op when already enabled
	"/google.iam.admin.v1.IAM/DisableServiceAccount":    Always,       // state-setting; disabling twice leaves it disabled
	"/google.iam.admin.v1.IAM/ListServiceAccountKeys":   Always,       // read
	"/google.iam.admin.v1.IAM/GetServiceAccountKey":     Always,       // read
	"/google.iam.admin.v1.IAM/CreateServiceAccountKey":  Never,        // NEVER: each call mints a new private key; a retry after a lost answer leaks a live key and spends the 10-key quota
	"/google.iam.admin.v1.IAM/UploadServiceAccountKey":  Never,        // creates a key resource: a replay of an upload that landed is at best refused as a duplicate of the caller's own key (no secret leaks: callers may opt in)
	"/google.iam.admin.v1.IAM/DeleteServiceAccountKey":  Always,       // state-setting on the one key it names; a replay after a lost success gets NOT_FOUND, which means it is gone
	"/google.iam.admin.v1.IAM/DisableServiceAccountKey": Always,       // state-setting
	"/google.iam.admin.v1.IAM/EnableServiceAccountKey":  Always,       // state-setting
	"/google.iam.admin.v1.IAM/SignBlob":                 Always,       // deprecated; signing the same bytes again changes nothing on the server
	"/google.iam.admin.v1.IAM/SignJwt":                  Always,       // deprecated; signing the same claims again changes nothing on the server
	"/google.iam.admin.v1.IAM/GetIamPolicy":             Always,       // read
	"/google.iam.admin.v1.IAM/SetIamPolicy":             IfPolicyEtag, // same rule as IAMPolicy.SetIamPolicy
	"/google.iam.admin.v1.IAM/TestIamPermissions":       Always,       // read
	"/google.iam.admin.v1.IAM/QueryGrantableRoles":      Always,       // read
	"/google.iam.admin.v1.IAM/ListRoles":                Always,       // read
	"/google.iam.admin.v1.IAM/GetRole":                  Always,       // read
	"/google.iam.admin.v1.IAM/CreateRole":               Never,        // like CreateServiceAccount: a replay of a create that landed answers ALREADY_EXISTS for the caller's own role
	"/google.iam.admin.v1.IAM/UpdateRole":               IfRoleEtag,   // writes a whole permission list (a replay could re-add a permission removed in between) unless the role's etag makes it fail ABORTED
	"/google.iam.admin.v1.IAM/DeleteRole":               Always,       // state-setting (soft delete): a deleted role's ID is not reused, so a replay can only find the same role deleted (or delete it again if someone undeleted it in between, as a later request would); an etag in the request still applies
	"/google.iam.admin.v1.IAM/UndeleteRole":             Always,       // state-setting: within the 7 days a role can be undeleted its ID is not reused, so a replay can only restore the same role; one whose first attempt landed may answer that the role is not deleted, the state asked for
	"/google.iam.admin.v1.IAM/QueryTestablePermissions": Always,       // read
	"/google.iam.admin.v1.IAM/QueryAuditableServices":   Always,       // read
	"/google.iam.admin.v1.IAM/LintPolicy":               Always,       // validates a policy it is given; stores nothing

	// google.iam.credentials.v1.IAMCredentials: each call mints a short-lived
	// token or a signature and keeps no state on the server, so a replay at
	// worst leaves an unused token to expire.
	"/google.iam.credentials.v1.IAMCredentials/GenerateAccessToken": Always, // mints a short-lived token, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/GenerateIdToken":     Always, // mints a short-lived token, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/SignBlob":            Always, // signs, no server-side state
	"/google.iam.credentials.v1.IAMCredentials/SignJwt":             Always, // signs, no server-side state

	// google.iam.v2.Policies (deny policies). The writes start long-running
	// operations; replaying the start is as safe as the operation itself. A
	// replay whose first answer was lost also loses that operation's name.
	"/google.iam.v2.Policies/ListPolicies": Always,           // read
	"/google.iam.v2.Policies/GetPolicy":    Always,           // read
	"/google.iam.v2.Policies/CreatePolicy": Never,            // create: a replay of one that landed answers ALREADY_EXISTS for the caller's own policy
	"/google.iam.v2.Policies/UpdatePolicy": IfDenyPolicyEtag, // writes the whole rule set: safe only when the etag makes a late replay fail ABORTED
	"/google.iam.v2.Policies/DeletePolicy": IfDeleteEtag,     // without an etag IAM "deletes the policy regardless of its current etag": a late replay could delete a policy of the same name created in between; with one it fails ABORTED instead

	// google.longrunning.Operations: how v2's writes (and other APIs'
	// long-running operations) are polled.
	"/google.longrunning.Operations/ListOperations":  Always, // read
	"/google.longrunning.Operations/GetOperation":    Always, // read: polling an operation
	"/google.longrunning.Operations/WaitOperation":   Always, // read: waits for the operation, changes nothing
	"/google.longrunning.Operations/CancelOperation": Always, // state-setting on the one operation it names: cancelling twice leaves it cancelled
	"/google.longrunning.Operations/DeleteOperation": Always, // state-setting: the caller no longer wants the result; a replay after a lost success gets NOT_FOUND
}
