// Package policy updates Google Cloud IAM policies as a retried transaction:
// the read-modify-write that Google's IAM guidance prescribes, run again from
// the read whenever a concurrent change (409 ABORTED) or a transient failure
// gets in the way.
//
// # Never a blind overwrite
//
// SetIamPolicy without an etag is a blind overwrite: it replaces whatever
// policy is there, including every change another writer made since you read
// it, and IAM will not tell you. This package always writes with the etag of
// the policy it read, so a concurrent change is detected (ABORTED, or
// FAILED_PRECONDITION on some services) and the whole read-modify-write is
// run again on the fresh policy.
//
// # Use
//
//	r, err := interceptor.New() // the Retrier your clients' interceptor uses
//	if err != nil { ... }
//	u, err := policy.NewUpdater(client, r) // resourcemanager/apiv3, pubsub, ..., FromAdmin, FromConn, crmv3, iamv1
//	if err != nil { ... }
//	p, err := u.Update(ctx, "projects/my-project",
//		policy.AddBinding("roles/viewer", "user:alice@example.com"),
//		policy.RemoveBinding("roles/editor", "user:bob@example.com"))
//
// An Update reads the policy with RequestedPolicyVersion 3 (so conditional
// bindings are seen), applies the mutations to a copy, and writes only when
// something changed, with the read etag, an explicit update_mask and version 3
// whenever a binding has a condition. It runs as an interceptor.Transact on
// the Retrier given to NewUpdater: the same backoff, deadline, budget, clock
// and observers as the interceptor's for transient failures; reruns after a
// conflict follow interceptor.ScaledConflicts unless WithConflictBackoff
// chooses otherwise. Hand it the client of
// the service that owns the resource (its GAPIC client, gRPC or REST, meets
// Client as it is); the REST discovery clients go through the crmv3 and
// iamv1 adapters.
//
// The Updater owns the retries of the calls it makes: put it over a client
// that carries the interceptor (or the RoundTripper), and that face passes the Updater's
// calls straight through (their context is marked), while gax.WithRetry(nil)
// on each call keeps a GAPIC client's own retries off. The server sees the
// attempts of one schedule, and the caller never waits past one deadline.
//
// # Promises
//
//   - Mutations are idempotent: applied to a policy that already holds their
//     change they report no change. That makes a lost answer (a write that
//     committed but whose reply was lost) safe: the rerun finds the work
//     done, writes nothing and succeeds. A change lands exactly once.
//   - Nothing is written when nothing changed.
//   - Members compare as IAM canonicalises them (the email part of a member
//     case-insensitively), and bindings are keyed by role and condition.
//   - A change that would take the policy past MaxPrincipals member entries
//     is refused before anything is written.
//   - Concurrent Updates of one resource through one Updater are coalesced
//     into one read-modify-write (group commit), and each caller gets its own
//     result or error.
//   - Errors keep their gRPC status (status.Code sees through the wrapping)
//     and name the resource.
package policy
