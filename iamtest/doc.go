// Package iamtest is an in-process fake of the Google Cloud IAM API (gRPC
// and REST) for tests of code that calls IAM, with controls that make it fail the ways real
// IAM fails. No credentials and no network are involved: the fake serves over
// an in-memory listener, and real cloud.google.com/go clients reach it with
// the options of ClientOptions.
//
// It serves google.iam.v1.IAMPolicy (GetIamPolicy, SetIamPolicy,
// TestIamPermissions for any resource name); google.iam.admin.v1.IAM
// (service accounts: create, get, list, patch, update, delete, undelete,
// enable, disable; their keys: create, upload, get, list, delete, enable,
// disable; their policies; predefined and custom roles: create, get, list,
// update, delete, undelete; QueryGrantableRoles, QueryTestablePermissions);
// and the IAM methods of google.cloud.resourcemanager.v3 Projects, Folders
// and Organizations, all backed by one policy store. It keeps IAM's
// semantics: etags that move on every write (policies and custom roles), a
// stale etag answered ABORTED, policy versions and conditions, member and
// role validation, soft-deleted roles and accounts that can be undeleted
// for a while (RoleUndeleteWindow, AccountUndeleteWindow) on the fake's
// clock. Condition expressions are parsed as CEL (with cel-go): one that
// does not parse is refused INVALID_ARGUMENT naming the problem, and
// LintPolicy reports the same parse errors. What it does not serve (SignBlob
// and SignJwt, deprecated for the IAM Credentials API; LintPolicy of
// anything but a condition; QueryAuditableServices; the other
// methods of the resourcemanager services) answers UNIMPLEMENTED over gRPC
// and 501 over REST, never NOT_FOUND; over REST, a request that is no route
// of IAM's at all answers 404 with an HTML body, as Google's front end
// does. It also serves IAM v2 deny policies
// (see Deny policies below).
//
// A test makes a fake with NewServer, which stops it when the test ends:
//
//	srv := iamtest.NewServer(t)
//	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
//	...
//	srv.FailNext(iamtest.MethodGetServiceAccount, 2, codes.Unavailable)
//
// The same store, controls and call log are served over REST too (HTTP/JSON
// as Google's REST APIs speak it), for discovery and GAPIC REST clients:
// RESTEndpoint, HTTPClient and RESTClientOptions reach it in-process. Serve
// and ServeREST put the gRPC and REST faces on listeners of your own, for
// programs in other processes.
//
// # Controls
//
// Every control is a method of Server, may be called at any time, from any
// goroutine, and takes effect for the calls that arrive after it. Methods are
// named by the Method constants; AnyMethod stands for every method, and a
// setting made for a named method wins over the AnyMethod one. A control given
// an input it cannot honour (an OK code, a negative count, a rate outside
// [0, 1], a method the fake does not serve) panics with a message naming it:
// such a test is wrong, and a silent default would hide it.
//
// In the order the fake applies them to a call: outages (SetOutage), latency
// (SetLatency), scripted faults (FailNext), random faults (SetFailureRate),
// a concurrent writer moving the etag (ConcurrentWriteNext), the call itself,
// lost answers (LoseNextAnswers, SetLostAnswerRate). RetryInfo (SetRetryInfo)
// decorates every injected error; eventual consistency of new service
// accounts (SetPropagationDelay, SetPropagationReads) is part of the fake's
// answers. The call log (Calls, CountCalls, ResetCalls) records every call
// with its method, resource, code, whether the answer was injected and
// whether the server acted (Applied: a write whose answer was lost is logged Injected
// and Applied, so "landed exactly once" can be proved from the log; a deny
// write is Applied once its long-running operation succeeded).
//
// # Data and fidelity
//
// SeedPolicy and SeedServiceAccount set up what a test starts from (checked
// as IAM checks a write, visible at once, logged as no call), and LoadSeed
// all of it from one JSON seed file (projects, folders, organizations,
// service accounts, users and groups, policies, custom roles, deny
// policies: its doc gives the format); Policy, ServiceAccount,
// ServiceAccountKeys, CustomRole and DenyPolicy read the store back. Where
// real IAM's behaviour is documented the fake follows it by default (member case folded,
// a write below the stored policy version refused, 10 keys per account, the
// 1,500-member limit in IAM's words, a grant to a service account that does
// not exist, or to a re-created one beside its deleted: member, refused, no
// condition on a basic role or for allUsers, at most 12 logical operators in
// a condition, audit-log exemptions counted among the 1,500 principals);
// where it is not, or where it depends on
// the organisation, a control chooses it, with a documented default:
// SetPropagationCodes, SetStaleReads, SetConditionalRead, RegisterProject and
// InviteOwner, SetKnownRolesOnly, AddRoles and SetPredefinedRole, SetKeyCreationDisabled,
// SetKeyLimitExhausted, SetRefuseUnknownServiceAccounts, SetKnownPrincipals, SetShuffleBindings,
// SetIAMMessages.
// FailNextWith injects a ready-made IAM-shaped error (QuotaExceededError,
// PermissionDeniedError) that carries the google.rpc.ErrorInfo reason real
// IAM sends, for code that decides by reason.
//
// The sources: a project that does not exist, or that the caller cannot
// see, is answered as Resource Manager answers it
// (https://cloud.google.com/resource-manager/reference/rest/v3/projects/getIamPolicy),
// project IDs are checked as
// https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin
// says, and policies as https://cloud.google.com/iam/docs/policies says.
// Which code a new service account's reads answer while it is not visible,
// and for how long, is undocumented
// (https://cloud.google.com/iam/docs/service-accounts-create says only that
// a new account may take 60 seconds or more to be usable): IAM answers
// NOT_FOUND, or for a while PERMISSION_DENIED, so the fake answers
// NOT_FOUND unless SetPropagationCodes says otherwise.
//
// # Time
//
// Latency and propagation windows run on the fake's clock: the wall clock
// unless WithClock gives another (any value with Now and Sleep). Tests of
// fault handling need not wait real backoff. Run them first under
// testing/synctest's synctest.Test: the wall clock there is a fake one that
// jumps ahead whenever every goroutine of the test is blocked, so the
// Retrier's waits, the Updater's and the fake's latency take no real time,
// and concurrent callers (goroutines, many Updaters, workers of your own)
// need no rule (see TestSynctestSeparateUpdaters and the synctest example).
//
// A VirtualClock (NewVirtualClock) serves what a bubble cannot (the CLI's
// virtual-time demo and simulator, a wait checked to the nanosecond). It is
// shared by the fake and the retrying code (interceptor.WithClock), and its
// rule is: time stands still while any thread is awake; when every thread
// sleeps on the clock, it jumps to the earliest wake-up and wakes that
// sleeper alone, so sleepers wake in virtual-time order, each at its own
// deadline, never before it.
//
//   - Its threads are the goroutine that called NewVirtualClock and the
//     goroutines of Go(ctx, n, f), numbered 0..n-1, whose waits overlap in
//     virtual time; Go's caller (a thread) waits until they all return.
//   - A goroutine that a thread starts with the context Go gave it (the
//     policy Updater's batch) sleeps in the thread's place; the fake's
//     handlers sleep in their caller's place.
//   - Any other goroutine's Sleep or Go panics, naming the rule: a goroutine
//     the clock does not count would make every thread's waits wrong.
//   - A thread must not wait for another thread, nor for a sleeper that
//     serves another thread too (Updates one Updater coalesces): such tests
//     run under synctest.
//
// The clock does not end a sleep at its context's deadline, which is
// wall-clock time; NewVirtualClock(time.Now()) makes code that compares a
// deadline with Now (the interceptor, which never starts a wait past the
// deadline) compare as a real run would.
//
// # Every control and its default
//
// Faults (all off until set; ResetFaults clears them):
//
//	SetOutage, ClearOutage        no outage
//	SetLatency                    no latency
//	FailNext, FailNextWith        no scripted failure
//	SetFailureRate                rate 0
//	LoseNextAnswers               no lost answer
//	SetLostAnswerRate             rate 0 (AnyMethod: writes only)
//	SetRetryInfo                  no RetryInfo detail
//	ConcurrentWriteNext           no interleaved writer
//	SetStaleEtagCode              ABORTED
//	SetSeed (WithSeed)            seed 1
//
// Consistency and fidelity:
//
//	SetPropagationDelay           0 (new accounts visible at once)
//	SetPropagationReads           0
//	SetPropagationCodes           NOT_FOUND
//	SetStaleReads                 0 (reads see the last write)
//	SetConditionalRead            RefuseConditionalRead
//	SetRefuseUnknownServiceAccounts on: a grant to a user-managed service
//	                              account the fake does not hold (never made,
//	                              or deleted) is refused INVALID_ARGUMENT
//	SetKeyCreationDisabled        off
//	SetKeyLimitExhausted          off: an 11th key is FAILED_PRECONDITION "Precondition
//	                              check failed." (on: RESOURCE_EXHAUSTED with RetryInfo 86,401 s)
//	SetIAMMessages                off (injected messages start with "iamtest: injected")
//	SetKnownRolesOnly, AddRoles   off: every well-formed role is accepted, and GetRole
//	                              answers any well-formed roles/NAME (on: one the fake
//	                              does not know is refused, and NOT_FOUND for GetRole)
//	SetPredefinedRole             five built-in roles with permissions (roles/owner,
//	                              editor, viewer, iam.serviceAccountUser and
//	                              iam.serviceAccountTokenCreator); any other
//	                              roles/NAME has none
//	SetShuffleBindings, SeedShuffle off: bindings in stored order
//	RegisterProject, InviteOwner  registry off: every project exists; no invitation
//	SetServiceAccountQuota        MaxServiceAccountsPerProject (100) per project
//	SetCallerPermissions,
//	ResetCallerPermissions        the caller holds every well-formed permission
//	SetProjectsWithoutOrganization off: a project's last owner may be removed
//	SetRESTQueryBindsBodyFields   off: query parameters of a body "*" REST method are ignored
//	SetKnownPrincipals            off: every user and group exists (deny-policy emails
//	                              then must be lower case)
//	SetQuotas                     off: no per-minute quota (on: IAM v1's 6,000 reads and
//	                              600 writes, v2's 5 and 5, a minute; 429 without RetryInfo)
//
// Fixed by IAM's documentation, not by a control: 10 user-managed keys per
// account, display_name at most 100 bytes and description 256, custom role
// IDs of 3 to 64 letters, digits, underscores and periods, 300 custom roles
// per project or organization (MaxCustomRolesPerParent; deleted ones count
// until purged), a role's description up to 300 bytes and its title,
// description and permissions up to 64 KB, no resourcemanager.projects.list
// in a project's role nor in TestIamPermissions on a project,
// ListRoles and QueryGrantableRoles pages of 300 roles by default and 1,000
// at most (QueryTestablePermissions 100 and 1,000, ListServiceAccounts 20
// and 100; a larger page_size is capped),
// RoleUndeleteWindow (7 days) then RolePurgeWindow (30 days),
// AccountUndeleteWindow (30 days), the empty TestIamPermissions answer for a
// resource that does not exist.
//
// # Deny policies
//
// The fake serves IAM v2 deny policies, google.iam.v2.Policies (iam/apiv2's
// NewPoliciesClient over gRPC, NewPoliciesRESTClient over REST at
// /v2/policies/...), named as google/iam/v2/policy.proto names them:
// policies/{attachment_point}/denypolicies/{policy_id}, the attachment point
// a project, folder or organization URL-encoded
// (policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/my-policy).
// As policy.proto documents: every write moves the etag; UpdatePolicy with a
// stale etag, and DeletePolicy with one, fail ABORTED (409); DeletePolicy
// without an etag deletes whatever the etag; ListPolicies answers the
// policies without their rules; every answer names a project by number
// ("Responses always contain the numeric ID"): its registered number
// (RegisterProject, a seed file's number), else one derived from its ID, the
// same in every run (ProjectNumber tells it); requests may use either.
// Rules are checked against deny.proto's principal forms
// (principal://goog/subject/EMAIL, principalSet://goog/group/EMAIL,
// principalSet://goog/public:all, never an exception, subject and attribute
// values that may hold "/", ...) and the v2 permission form
// SERVICE_FQDN/RESOURCE.ACTION or a permission group (SERVICE_FQDN/*.*,
// SERVICE_FQDN/RESOURCE.*); an email in a principal must be written in its
// account's case (lower case, or the case SetKnownPrincipals gave), as IAM
// refuses a mismatch; a denial condition may call
// only the resource tag functions (resource.matchTag, ...); an attachment
// point holds up to 500 deny policies and 500 deny rules in all
// (https://cloud.google.com/iam/docs/deny-overview). CreatePolicy, UpdatePolicy
// and DeletePolicy return long-running operations, polled with
// google.longrunning.Operations GetOperation (MethodGetOperation; GET
// /v2/{name=policies/*/*/*/operations/*}); the write takes effect when its
// operation completes, and the call is logged Applied only then, if it
// succeeded. The deny controls, with their defaults:
//
//   - SetDenyOperationDelay (0: operations complete within their call);
//   - SetDenyStaleEtagInOperation (off: a stale etag fails the call);
//   - SeedDenyPolicy and DenyPolicy, to set up and read back the store.
//
// Every fault control, the call log and ConcurrentWriteNext (on
// MethodUpdatePolicy and MethodDeletePolicy) apply to the deny methods as to
// the others.
//
// The fake shares no code with the iamretry packages it is used to test.
package iamtest
