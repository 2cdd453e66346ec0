// Implementation notes (formerly internal/fakeiam's package doc, not part of
// iamtest's): an in-process fake of the Google Cloud IAM gRPC API, with
// fault injection, for tests of code that calls IAM.
//
// It serves, over an in-memory bufconn listener or a real one:
//
//   - google.iam.v1.IAMPolicy: GetIamPolicy, SetIamPolicy and
//     TestIamPermissions for any resource name;
//   - google.iam.admin.v1.IAM: service accounts (create, get, list, patch,
//     update, delete, undelete, enable, disable), service account keys
//     (create, upload, get, list, delete, enable, disable), predefined and
//     custom roles (create, get, list, update, delete, undelete),
//     QueryGrantableRoles, QueryTestablePermissions, and the policies of
//     service accounts;
//   - google.cloud.resourcemanager.v3 Projects, Folders and Organizations:
//     their GetIamPolicy, SetIamPolicy and TestIamPermissions;
//   - google.iam.v2.Policies (deny policies: list, get, create, update,
//     delete) and google.longrunning.Operations GetOperation for their
//     long-running operations, which complete SetDenyOperationDelay after
//     the call on the fake's clock (at once by default); the write takes
//     effect then, and its etag is checked at the call (unless
//     SetDenyStaleEtagInOperation) and again then. REST at /v2/policies/...
//     (from the descriptors' HTTP rules), the attachment point's %2F kept as http.proto says.
//
// Every other method of those services answers UNIMPLEMENTED (501 over
// REST: see RESTHandler). All the policy
// methods share one store, so a policy written through one service is read
// through the others.
//
// # IAM's semantics
//
// A resource never written has an empty policy, version 0, etag
// emptyPolicyEtag. Every successful write mints a new opaque etag.
// SetIamPolicy with a non-empty etag that is not the current one fails
// ABORTED with concurrentChangeMessage; without an etag it overwrites blindly.
// The update_mask is honoured (bindings, etag, audit_configs; empty means
// bindings and etag, as IAM does); the etag is checked only when the mask
// holds "etag". Members and roles are validated, bindings without members are
// dropped, duplicate members and bindings with the same role and condition
// are merged, and more than maxPrincipals member entries are refused, each
// with INVALID_ARGUMENT and a message naming the bad value. A policy is stored
// and answered with the lowest version that represents it: 3 if a binding has
// a condition, else 1. Writing a condition needs version 3; reading a
// conditional policy with a requested version below 3 fails INVALID_ARGUMENT
// "Requested policy version (1) cannot be less than the existing policy
// version (3). For more information, ..."; a write carrying an etag with a
// version below the stored one is refused the same way. Members are stored
// and compared as IAM does (email values in lower case). Projects refuse
// allUsers, allAuthenticatedUsers and uninvited user owners. IAM's limits
// (maxPrincipals, maxGroups, maxConditionalBindingsPerRoleAndPrincipal,
// maxUserManagedKeys) are enforced with IAM's messages where known.
// TestIamPermissions grants every well-formed permission unless
// SetCallerPermissions says otherwise, and answers the empty set for a
// resource that does not exist. Custom roles have etags of their own
// (UpdateRole and DeleteRole with a stale one answer ABORTED), are soft
// deleted, undeletable for RoleUndeleteWindow and then purged with their
// bindings.
//
// Where IAM's behaviour is undocumented or depends on what the caller can
// see, a control chooses it, with a documented default: RegisterProject (a
// registry of known projects, off), SetPropagationCodes, SetStaleReads,
// SetConditionalRead, SetRefuseUnknownServiceAccounts, SetKnownRolesOnly,
// SetKeyCreationDisabled, SetIAMMessages, SetShuffleBindings. Each names, in
// its doc comment, where the real behaviour is documented.
//
// Service accounts can be made eventually consistent: with
// SetPropagationDelay or SetPropagationReads a new account answers
// NOT_FOUND (or PERMISSION_DENIED: SetPropagationCodes) to GetServiceAccount,
// NOT_FOUND to the admin service's policy methods, and a grant naming it
// INVALID_ARGUMENT, for a while, as IAM's do.
//
// # Faults
//
// A grpc.UnaryServerInterceptor inside the fake applies to every method, in
// this order: latency (SetLatency, slept through an injectable sleep func that
// honours the call's context); an outage window on the fake's clock
// (SetOutage); scripted failures (FailNext); random failures (SetFailureRate).
// Those three are decided before the handler, which then does not run. Lost
// answers (LoseNextAnswers, SetLostAnswerRate) run the handler, so the write
// commits, and then answer UNAVAILABLE. ConcurrentWriteNext lets another
// writer move a policy's etag just before a SetIamPolicy, so that the fake's
// own logic answers the stale etag (ABORTED, or the code of
// withStaleEtagCode) and a rerun reads a new etag. SetRetryInfo adds a google.rpc.RetryInfo
// detail to injected errors, whose messages start with injectedPrefix (or
// read like IAM's: SetIAMMessages); PERMISSION_DENIED and RESOURCE_EXHAUSTED
// carry IAM's ErrorInfo. FailNextWith injects a ready-made error, such as
// QuotaExceededError or PermissionDeniedError.
// Methods are named by their full gRPC names (the Method* constants); AnyMethod
// ("*") means every method. Random choices come from a PCG source seeded with
// WithSeed (1 by default) behind a mutex: the same seed and the same sequence
// of calls give the same faults.
//
// Every call is logged (Calls, CountCalls, ResetCalls) with its method, the
// time on the fake's clock, its code, whether it was injected, and the value
// of its x-retry-attempt metadata.
//
// # Wiring
//
// New serves the in-memory listener that ClientOptions, Conn and Dial
// reach (the REST face calls the methods over Conn, so through the same
// fault layer and call log); Serve serves a real listener. Close stops
// everything and leaves no goroutine behind.
//
// The GAPIC clients retry some codes on their own (the admin client retries
// UNAVAILABLE with backoff, on real timers). A test of another retry layer
// should turn those retries off, for example with
// client.CallOptions = &admin.IamCallOptions{}.
//
// The package imports none of iamretry's public packages: a fake that shared
// code with what it tests would prove nothing.

package iamtest
