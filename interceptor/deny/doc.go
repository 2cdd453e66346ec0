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
// on. The Updater owns the retries of the calls it makes: their context is
// marked, so that the Retrier's interceptor (or RoundTripper) beneath the
// client passes them through, and each call and poll carries
// gax.WithRetry(nil).
//
// # The read-modify-write
//
// A policy is named policies/{attachment_point}/denypolicies/{policy_id},
// the attachment point URL-encoded:
// policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/my-policy.
// An Update reads the policy with GetPolicy, applies the changes to a copy,
// and when something changed writes it with UpdatePolicy carrying the etag
// read (IAM updates only the rules and the display name), then waits for
// the update's long-running operation within the same context, polling it
// (GetOperation) with waits that start at WithPollInterval's and double.
// It reruns the whole from the read, never the write alone: after a
// conflict (ABORTED, from the call or as the operation's error: a stale
// etag may surface either way; FAILED_PRECONDITION when a fresh read shows
// the etag moved) and after a transient failure of the read, the write or
// a poll (a failed poll is a failed write: the fresh read and the
// idempotent changes find out whether it landed). Adding a rule that is
// there, or removing one that is not, changes nothing, so every change
// lands exactly once.
//
// With CreateIfAbsent, a policy that does not exist is created holding the
// rules the changes add; when they add none, nothing is created and Update
// returns nil, nil.
//
// # Waiting for an operation
//
// The wait for an operation is bounded by the Update's ctx and by the
// Retrier's per-attempt timeout (which bounds each write with its wait: a
// wait it cuts off is a transient failure, followed by a fresh read), not
// by the Retrier's retry deadline, which counts from a failure: IAM does
// not say how long its operations take, so give ctx a deadline. A wait
// between polls that would end past ctx's deadline is not started; when
// ctx ends (or its deadline would pass) during the wait, the error has the
// context's code.
//
// # Errors
//
// Changes made by neither AddRule nor RemoveRule, malformed rules, no
// change at all and a malformed name are refused before any call, with an
// error whose gRPC code is INVALID_ARGUMENT naming each. Otherwise Update
// returns the last error (see interceptor.Transact), or, when ctx ends
// during a wait, an error whose code is the context's and that wraps the
// last one; either wrapped in an error that names the policy, whose
// status.Code is the cause's over gRPC and REST alike (codes.CodeOf's
// reading of a REST error's body), and which errors.Is and errors.As see
// through; when ctx ends during a call, errors.Is finds ctx's error on
// either transport.
//
// # Coalescing
//
// The deny, policy and role Updaters share one core: concurrent Updates of
// one deny policy through one Updater are coalesced into one
// read-modify-write (one write and one wait for its operation) as the
// policy package's doc describes (its sections Coalescing and Metrics,
// observers and logs: [github.com/iamretry/iamretry/interceptor/policy]),
// with deny policies for resources and Changes for Mutations. In short:
// callers whose outgoing headers and context forms are the same share one
// read-modify-write, led by the first on its goroutine, in arrival order;
// a shared write IAM refuses (INVALID_ARGUMENT, FAILED_PRECONDITION: past
// the limit of rules, say) is split so that only the caller to blame
// fails; a caller whose ctx ends returns at once.
package deny
