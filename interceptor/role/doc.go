// Package role changes Google Cloud IAM custom roles as a retried
// transaction: the read-modify-write that Google's IAM guidance prescribes
// for an object guarded by an etag (Role.etag: "Used to perform a
// consistent read-modify-write"), run again from the read whenever a
// concurrent change (409 ABORTED) or a transient failure gets in the way.
//
// # Use
//
//	r, err := interceptor.New() // the Retrier your clients' interceptor uses
//	if err != nil { ... }
//	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient)
//	if err != nil { ... }
//	u, err := role.NewUpdater(client, r) // or role.NewUpdater(iamv1.Roles(discoveryService), r)
//	if err != nil { ... }
//	got, err := u.Update(ctx, "projects/my-project/roles/deployer",
//		role.AddPermissions("run.services.update"),
//		role.RemovePermissions("run.services.delete"),
//		role.SetStage(adminpb.Role_GA))
//
// An Update reads the role (GetRole), applies the changes to a copy, and
// writes only when something changed (UpdateRole), with the etag read and
// an update_mask naming exactly the fields whose value changed (title,
// description, included_permissions, stage). It runs as an
// interceptor.Transact on the Retrier given to NewUpdater: the same
// backoff, deadline, budget, clock, observers and metrics as every other
// face of that Retrier; reruns after a conflict follow
// interceptor.ScaledConflicts unless WithConflictBackoff chooses otherwise.
//
// The Updater owns the retries of the calls it makes: their context is
// marked, so that the Retrier's interceptor (or RoundTripper) beneath passes
// them straight through, and each GAPIC call carries gax.WithRetry(nil), so
// that the admin client's own retries (GetRole retries UNAVAILABLE by
// default) stay off.
//
// # Promises
//
//   - Changes are idempotent: applied to a role that already holds them they
//     change nothing. A write whose answer was lost (it committed) is
//     therefore safe: the rerun reads the role, finds the work done and
//     writes nothing. Each change lands exactly once.
//   - Nothing is written when nothing changed.
//   - A predefined role (roles/...) is refused before any call, and a
//     deleted role after the read, before any write: ErrPredefined and
//     ErrDeleted.
//   - Permissions are IAM's to judge: a permission IAM does not know (or
//     that custom roles may not hold) fails the write with IAM's own error
//     (INVALID_ARGUMENT), returned at once, never retried.
//   - Errors name the role and keep the gRPC status of their cause
//     (status.Code sees through the wrapping, also for REST errors).
//
// An Update reruns the whole from the read, never the write alone, after a
// concurrent change (ABORTED, or FAILED_PRECONDITION when a fresh read
// shows the etag moved) or a transient failure of the read or the write.
// An Update with no changes is a retried read.
//
// # Errors
//
// Refused, with nothing written: a predefined role (ErrPredefined,
// INVALID_ARGUMENT) and a malformed name (INVALID_ARGUMENT: a role ID is at
// most 64 letters, digits, underscores and periods; a project or
// organization ID holds no white space, '?', '#' or '%'), before any call;
// a nil Change (INVALID_ARGUMENT), before any call; a deleted role
// (ErrDeleted, FAILED_PRECONDITION) and a Change's error (wrapped,
// errors.Is works), after the read. IAM's refusals (a permission it does
// not know, a title too long: INVALID_ARGUMENT; a role that does not
// exist: NOT_FOUND, rerun only with the 404 opt-in) are returned at once.
//
// Errors name the role and keep the gRPC status of their cause
// (status.Code(err) works, also for a REST client's errors; a
// FAILED_PRECONDITION found to be a conflict is reported as ABORTED). When
// ctx ends during a wait, the error has ctx's code and wraps the last
// error; during a call, it has ctx's code and errors.Is finds ctx's error,
// over gRPC as over REST; a ctx that has ended already sends nothing and
// gives an error that wraps ctx's error and cause, with its code.
//
// # Coalescing
//
// The role, policy and deny Updaters share one core: concurrent Updates of
// one role through one Updater are coalesced into one read-modify-write as
// the policy package's doc describes (its sections Coalescing and Metrics,
// observers and logs: [github.com/iamretry/iamretry/interceptor/policy]),
// with roles for resources and Changes for Mutations. In short: callers
// whose outgoing headers and context forms are the same share one
// read-modify-write, led by the first on its goroutine; each caller's
// Changes run on its own goroutine in arrival order; a shared write IAM
// refuses (INVALID_ARGUMENT, FAILED_PRECONDITION) is split so that only the
// caller to blame fails; a caller whose ctx ends returns at once. A panic
// in a Change reaches its own caller; in the Client, the caller that leads
// the batch.
package role
