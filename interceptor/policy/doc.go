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
// something changed, with the read etag, the update_mask "bindings,etag"
// (plus "audit_configs" when a mutation changed them) and version 3
// whenever a binding has a condition (else the version read). A concurrent
// change (ABORTED, or FAILED_PRECONDITION when a fresh read shows the etag
// moved) or a transient failure of the read or the write runs it all again
// from the read. It runs as an interceptor.Transact on
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
// That holds for every client that passes its context through and does not
// retry on its own otherwise.
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
//
// # Coalescing
//
// Concurrent Updates of one resource through one Updater are coalesced: a
// call that arrives while a read-modify-write of the resource is in flight
// joins the next one, with every other call that arrives meanwhile whose
// outgoing headers (gRPC outgoing metadata, gax callctx headers) and
// context forms (DisableContext, RetryNotFoundContext, DeadlineContext,
// MaxAttemptsContext) are those of the first. There is no added delay and
// no goroutine of the Updater's own (so it needs no Close): the first
// caller leads the batch on its goroutine, and each caller's mutations run
// on that caller's goroutine, in arrival order, each on a copy that is kept
// only if all of them succeed and stay within MaxPrincipals; each caller
// gets the policy its batch wrote, or its own error. The batch's calls
// carry the values of its leader's context and the latest of the callers'
// deadlines (none if a caller has none). A write of several callers'
// changes refused INVALID_ARGUMENT or FAILED_PRECONDITION (not a conflict)
// is split: each change is tried alone, so that only the caller to blame
// fails.
//
// When a caller's ctx ends before its result is known, its Update returns
// at once (or, when its own Mutation is running at that moment, as soon as
// that returns) with an error that wraps ctx's error and has its code: if
// the call was still queued, nothing of it was written; if its
// read-modify-write was under way, its change may have been written, as
// with any cancelled write, and later reruns of the batch leave it out. A
// caller that leads its batch returns so too: the batch's in-flight call is
// cancelled, and the next caller of the batch leads a rerun from a fresh
// read.
//
// Nothing handed to the Updater runs on a goroutine the caller cannot
// reach: a panic or a runtime.Goexit (a t.FailNow) in a Mutation ends its
// own caller's goroutine as it would have called the Mutation itself; in
// the Client, an observer, a logger or a classifier, the goroutine of the
// caller that leads the batch. The other callers' changes run again in the
// next batch, and later Updates of the resource carry on.
//
// The role and deny packages' Updaters share this core and coalesce alike.
//
// # Members IAM cannot see yet
//
// A write refused INVALID_ARGUMENT "... does not exist" naming a member that
// a change grants (a service account created moments ago, not visible to
// IAM yet) fails only the changes that grant it: the batch's other changes
// are written at once, in the next read-modify-write. With the Retrier's
// 404 opt-in (interceptor.WithRetryNotFound, or RetryNotFoundContext on an
// Update's context) the changes that grant the member wait for it, within
// the retry deadline, on a read-modify-write of their own that holds no
// other caller of the resource; without, their callers get the server's
// error at once, naming the option. A refusal that names no member the
// change grants ("Role (roles/editor) does not exist in the resource's
// hierarchy.") is final and returned at once.
//
// # Metrics, observers and logs
//
// The Retrier's classifier is given the method UpdateMethod, and observers
// see one Attempt per failed read-modify-write, with Method UpdateMethod
// and Resource the resource. A RetryInfo delay is the floor of a wait, as
// on every face.
//
// The Retrier's metrics (interceptor.WithMeterProvider) count each Update
// once, as a call of UpdateMethod, however it was batched:
// iamretry.client.calls with the code of the error Update returned (OK when
// none); the retries and retry_delay histograms with the attempts its
// change made after the first and the waits between them, over every
// read-modify-write it was part of (a coalesced write that was refused and
// split, or handed the change back, was an attempt of that change: its next
// run is a retry, after no wait); gave_up when its error is a give-up of
// the Retrier's (deadline, budget, ...), or with context_done when its
// context ended after its change met a failure. The writes and conflicts
// counters count the read-modify-writes'. An Update refused before it is
// queued (empty resource, nil Mutation, a context already done), or that
// panics or ends in runtime.Goexit, is not counted.
//
// Observers and the logger hear each read-modify-write's Attempts once,
// with the batch's context (the values of the caller that leads it): a
// batch of several Updates is one run to them, and a batch split after a
// refusal reports that refusal (NotRetryable) before each change runs
// alone, as a run of its own. The span events of a batch go to the span of
// each caller still waiting on it.
package policy
