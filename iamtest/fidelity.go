package iamtest

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
)

// fidelity holds the controls of behaviours that real IAM shows but does not
// document precisely, and of the rules that are off by default so that a
// test need not register everything it names. cfgMu guards it.
type fidelity struct {
	propCodes       []codes.Code  // codes of hidden GetServiceAccount reads, the last repeated
	staleReads      time.Duration // how long a read after a write answers the previous policy
	condRead        ConditionalRead
	refuseUnknownSA bool
	keysDisabled    bool
	keyLimitQuota   bool // SetKeyLimitExhausted
	iamMessages     bool
	knownRolesOnly  bool
	shuffle         bool
	accountQuota    int // service accounts per project (SetServiceAccountQuota)
	noOrgProjects   bool
	queryBindsBody  bool // SetRESTQueryBindsBodyFields
}

func defaultFidelity() fidelity {
	return fidelity{propCodes: []codes.Code{codes.NotFound}, accountQuota: MaxServiceAccountsPerProject, refuseUnknownSA: true}
}

// fid returns a copy of the current fidelity controls.
func (s *Server) fid() fidelity {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.fid
}

// setFid changes the fidelity controls under the lock.
func (s *Server) setFid(f func(*fidelity)) {
	s.cfgMu.Lock()
	f(&s.cfg.fid)
	s.cfgMu.Unlock()
}

// SetPropagationCodes sets the codes GetServiceAccount answers while a new
// service account is hidden (SetPropagationDelay, SetPropagationReads): the
// first hidden read answers cs[0], the second cs[1], and so on, the last
// code repeating (default NOT_FOUND alone; no code restores it).
// PERMISSION_DENIED comes as IAM sends it ("Permission
// iam.serviceAccounts.get is required to perform this operation on service
// account NAME.", ErrorInfo reason ReasonPermissionDenied). Whatever these
// codes, a grant to a hidden account answers INVALID_ARGUMENT "Service
// account EMAIL does not exist.", and the account's own policy methods
// NOT_FOUND. It panics on a code other than NOT_FOUND and PERMISSION_DENIED.
func (s *Server) SetPropagationCodes(cs ...codes.Code) {
	for _, c := range cs {
		if c != codes.NotFound && c != codes.PermissionDenied {
			panic(fmt.Sprintf("iamtest: SetPropagationCodes: code %v: IAM answers NOT_FOUND or PERMISSION_DENIED for an account that is not visible yet", c))
		}
	}
	if len(cs) == 0 {
		cs = []codes.Code{codes.NotFound}
	}
	cs = append([]codes.Code(nil), cs...)
	s.setFid(func(f *fidelity) { f.propCodes = cs })
}

// SetStaleReads makes GetIamPolicy answer, for d on the fake's clock after
// each write, the policy and etag the resource held before that write, as an
// eventually consistent read may: https://cloud.google.com/iam/docs/overview#consistency
// says policy changes take time to propagate; how reads behave meanwhile is
// undocumented. A SetIamPolicy carrying the stale etag is then refused as a
// concurrent change (ABORTED), so a read-modify-write must rerun until the
// read catches up. It applies at once, to writes already made too. d == 0,
// the default, turns it off. It panics on a negative d.
func (s *Server) SetStaleReads(d time.Duration) {
	mustDuration("SetStaleReads", d)
	s.setFid(func(f *fidelity) { f.staleReads = d })
}

// ConditionalRead is what GetIamPolicy answers when asked for policy version
// 1 (or 0, which means 1) of a policy that has conditional role bindings.
// https://cloud.google.com/iam/docs/policies#versions documents that such a
// read is not valid; what IAM answers is undocumented, and it has been seen
// to answer either way.
type ConditionalRead int

const (
	// RefuseConditionalRead answers INVALID_ARGUMENT "Requested policy
	// version (1) cannot be less than the existing policy version (3). For
	// more information, please refer to
	// https://cloud.google.com/iam/docs/policies#versions". The default.
	RefuseConditionalRead ConditionalRead = iota
	// SuffixConditionalRoles answers a version 1 policy in which each
	// conditional binding has lost its condition and has its role suffixed
	// "_withcond_" and a hash of the condition. Such a policy cannot be
	// written back: SetIamPolicy refuses the suffixed roles.
	SuffixConditionalRoles
)

// String returns the constant's name.
func (c ConditionalRead) String() string {
	switch c {
	case RefuseConditionalRead:
		return "RefuseConditionalRead"
	case SuffixConditionalRoles:
		return "SuffixConditionalRoles"
	}
	return fmt.Sprintf("ConditionalRead(%d)", int(c))
}

// SetConditionalRead chooses what a version-1 read of a conditional policy
// answers (see ConditionalRead). It panics on a value that is not one of the
// ConditionalRead constants.
func (s *Server) SetConditionalRead(mode ConditionalRead) {
	if mode != RefuseConditionalRead && mode != SuffixConditionalRoles {
		panic(fmt.Sprintf("iamtest: SetConditionalRead: %v is not a ConditionalRead constant", mode))
	}
	s.setFid(func(f *fidelity) { f.condRead = mode })
}

// SetRefuseUnknownServiceAccounts(false) lets SetIamPolicy grant roles to
// user-managed service accounts (NAME@PROJECT.iam.gserviceaccount.com) the
// fake does not hold. On by default, as IAM does: such a grant, and one to
// an account the fake deleted, is refused INVALID_ARGUMENT "Service account
// EMAIL does not exist." (the words of a not-yet-visible account). Turn it
// off for tests that grant to made-up accounts, or seed them
// (SeedServiceAccount). Google-managed accounts (service agents,
// @developer., @appspot., @cloudservices.) are never refused; accounts
// still propagating are refused whatever this setting.
func (s *Server) SetRefuseUnknownServiceAccounts(on bool) {
	s.setFid(func(f *fidelity) { f.refuseUnknownSA = on })
}

// SetKeyCreationDisabled acts as the organization policy constraint
// iam.disableServiceAccountKeyCreation
// (https://cloud.google.com/resource-manager/docs/organization-policy/restricting-service-accounts#disable_service_account_key_creation):
// while on, CreateServiceAccountKey answers FAILED_PRECONDITION "Key creation
// is not allowed on this service account." with a
// google.rpc.PreconditionFailure whose violation type is
// constraints/iam.disableServiceAccountKeyCreation. Off by default. Key
// uploads (UploadServiceAccountKey) are not blocked: IAM governs them by a
// constraint of their own, iam.disableServiceAccountKeyUpload.
func (s *Server) SetKeyCreationDisabled(on bool) {
	s.setFid(func(f *fidelity) { f.keysDisabled = on })
}

// SetIAMMessages makes injected errors given by their code alone (FailNext,
// SetFailureRate, SetOutage, lost answers) carry the message Google's front
// ends send with that code ("The service is currently unavailable." for
// UNAVAILABLE, "Internal error encountered." for INTERNAL, ...; the
// messages of https://cloud.google.com/apis/design/errors#handling_errors)
// instead of one that says the error was injected, for code that shows or
// matches messages. Either way, PERMISSION_DENIED carries a
// google.rpc.ErrorInfo of reason ReasonPermissionDenied and
// RESOURCE_EXHAUSTED one of reason ReasonRateLimitExceeded, as IAM's do.
// Off by default.
func (s *Server) SetIAMMessages(on bool) {
	s.setFid(func(f *fidelity) { f.iamMessages = on })
}

// SetKnownRolesOnly makes SetIamPolicy refuse a role the fake does not know
// (IAM's basic and common predefined roles, those ListRoles answers, those
// given by SetPredefinedRole, and those added with AddRoles) with INVALID_ARGUMENT "Role ROLE is not
// supported for this resource.", as IAM answers for a role it does not grant
// on that kind of resource. Which roles each kind of resource supports is
// IAM's (https://cloud.google.com/iam/docs/roles-permissions); the fake
// knows no kinds, so a known role is accepted everywhere; GetRole of an
// unknown roles/NAME answers NOT_FOUND. Off by default: every well-formed
// role is accepted and GetRole answers it (with no permissions).
func (s *Server) SetKnownRolesOnly(on bool) {
	s.setFid(func(f *fidelity) { f.knownRolesOnly = on })
}

// SetKeyLimitExhausted chooses how the fake refuses a service account's
// 11th user-managed key (CreateServiceAccountKey, UploadServiceAccountKey).
// On: RESOURCE_EXHAUSTED (HTTP 429) "Maximum number of keys on account
// reached." with a google.rpc.RetryInfo of 86,401 s, as IAM answered until
// about 2021 (gcloud output in https://github.com/kubeflow/pipelines/issues/348);
// a Retrier whose deadline is sooner ends the call at once. Off, the
// default: FAILED_PRECONDITION (HTTP 400) "Precondition check failed.", as
// IAM answers since (https://github.com/googleapis/google-api-dotnet-client/issues/2027,
// 2022: "We used to get error code 429").
func (s *Server) SetKeyLimitExhausted(on bool) {
	s.setFid(func(f *fidelity) { f.keyLimitQuota = on })
}

// SetShuffleBindings makes every policy the fake answers list its bindings
// in an order drawn from a seeded random source, since IAM documents no
// order (google.iam.v1.Policy's bindings are a list; nothing says a read
// answers them in the order they were written): code that depends on the
// order it wrote shows up. The source is seeded with WithSeed's seed (1
// without it) when the server starts, and by SeedShuffle. Off by default:
// bindings are answered in stored order.
func (s *Server) SetShuffleBindings(on bool) {
	s.setFid(func(f *fidelity) { f.shuffle = on })
}
