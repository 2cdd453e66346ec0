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
package role
