// Package deny changes IAM deny policies (IAM v2, google.iam.v2.Policies)
// by read-modify-write, retried as Google's IAM guidance says ("for 409
// ABORTED, retry the entire read-modify-write"): it adds and removes deny
// rules on a policy by name through interceptor.Transact, waits for the
// long-running update within the same deadline, and never replays a lone
// write.
//
// Deny rules name principals with IAM v2's identifiers
// (principal://goog/subject/EMAIL, principalSet://goog/group/GROUP_EMAIL,
// principalSet://goog/public:all, ...) and permissions as
// SERVICE_FQDN/RESOURCE.ACTION (iam.googleapis.com/roles.delete); both
// are checked, from one table, before any call.
//
// Wire iam/apiv2's PoliciesClient with interceptor.NewClient (gRPC) or
// interceptor.NewRESTClient (REST) and the same Retrier the Updater runs
// on.
package deny
