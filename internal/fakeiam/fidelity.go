package fakeiam

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
	iamMessages     bool
	knownRolesOnly  bool
	shuffle         bool
	accountQuota    int // service accounts per project (SetServiceAccountQuota)
	noOrgProjects   bool
	queryBindsBody  bool // SetRESTQueryBindsBodyFields
}

func defaultFidelity() fidelity {
	return fidelity{propCodes: []codes.Code{codes.NotFound}, accountQuota: MaxServiceAccountsPerProject}
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

func checkPropagationCodes(cs []codes.Code) []codes.Code {
	if len(cs) == 0 {
		return []codes.Code{codes.NotFound}
	}
	for _, c := range cs {
		if c != codes.NotFound && c != codes.PermissionDenied {
			panic(fmt.Sprintf("fakeiam: propagation code %v: only NOT_FOUND and PERMISSION_DENIED are what IAM answers for an account that is not visible yet", c))
		}
	}
	return append([]codes.Code(nil), cs...)
}

// withPropagationCodes sets the codes that GetServiceAccount answers while a
// new account is hidden (see withPropagationDelay): the first hidden read of
// an account answers cs[0], the second cs[1], and so on, the last code
// repeating. IAM answers NOT_FOUND, or PERMISSION_DENIED ("Permission
// iam.serviceAccounts.get is required ...", with a google.rpc.ErrorInfo of
// reason IAM_PERMISSION_DENIED) for a while; which one, and for how long, is
// undocumented, so the default is NOT_FOUND alone. Another resource's
// SetIamPolicy naming a hidden account answers INVALID_ARGUMENT whatever
// these codes; the account's own policy methods answer NOT_FOUND. It panics
// on a code other than NOT_FOUND and PERMISSION_DENIED; no code restores the
// default.
func withPropagationCodes(cs ...codes.Code) Option {
	cs = checkPropagationCodes(cs)
	return func(c *config) { c.fid.propCodes = cs }
}

// SetPropagationCodes changes the codes of hidden GetServiceAccount reads (see
// withPropagationCodes), for every account from the next read on.
func (s *Server) SetPropagationCodes(cs ...codes.Code) {
	cs = checkPropagationCodes(cs)
	s.setFid(func(f *fidelity) { f.propCodes = cs })
}

// withStaleReads makes GetIamPolicy answer, for d on the fake's clock after a
// write, the policy and etag the resource held before that write, as an
// eventually consistent read may (https://cloud.google.com/iam/docs/overview#consistency
// says changes take time to propagate; how reads behave meanwhile is
// undocumented). A write carrying the stale etag is then refused as a
// concurrent change. Zero, the default, turns it off.
func withStaleReads(d time.Duration) Option {
	return func(c *config) { c.fid.staleReads = max(d, 0) }
}

// SetStaleReads changes the stale-read window (see withStaleReads); it applies
// at once, to writes already made too.
func (s *Server) SetStaleReads(d time.Duration) {
	s.setFid(func(f *fidelity) { f.staleReads = max(d, 0) })
}

// ConditionalRead is what GetIamPolicy does when asked for policy version 1
// (or 0) of a policy that has conditional bindings.
type ConditionalRead int

const (
	// RefuseConditionalRead answers INVALID_ARGUMENT "Requested policy version
	// (1) cannot be less than the existing policy version (3). For more
	// information, please refer to https://cloud.google.com/iam/docs/policies#versions".
	// IAM has been seen to answer so; it is the default.
	RefuseConditionalRead ConditionalRead = iota
	// SuffixConditionalRoles answers a version 1 policy whose conditional
	// bindings have no condition and a role suffixed "_withcond_" and a hash
	// of the condition, as IAM has also been seen to answer (undocumented).
	// Such a policy cannot be written back (the role is invalid).
	SuffixConditionalRoles
)

// SetConditionalRead chooses what a version-1 read of a conditional policy
// answers (see ConditionalRead). It panics on an unknown value.
func (s *Server) SetConditionalRead(mode ConditionalRead) {
	if mode != RefuseConditionalRead && mode != SuffixConditionalRoles {
		panic(fmt.Sprintf("fakeiam: unknown ConditionalRead %d", mode))
	}
	s.setFid(func(f *fidelity) { f.condRead = mode })
}

// SetRefuseUnknownServiceAccounts makes SetIamPolicy refuse a grant to
// serviceAccount:EMAIL, EMAIL ending in .gserviceaccount.com, when the fake
// holds no such account, with INVALID_ARGUMENT "Service account EMAIL does
// not exist.", as IAM does. Off by default, since a test may name accounts of
// projects it never created; accounts the fake created and still hides (see
// withPropagationDelay) are refused whatever this setting.
func (s *Server) SetRefuseUnknownServiceAccounts(on bool) {
	s.setFid(func(f *fidelity) { f.refuseUnknownSA = on })
}

// SetKeyCreationDisabled acts as the organization policy constraint
// iam.disableServiceAccountKeyCreation
// (https://cloud.google.com/resource-manager/docs/organization-policy/restricting-service-accounts#disable_service_account_key_creation):
// while on, CreateServiceAccountKey answers FAILED_PRECONDITION "Key creation
// is not allowed on this service account." with a google.rpc.PreconditionFailure
// naming the constraint. Off by default.
func (s *Server) SetKeyCreationDisabled(on bool) {
	s.setFid(func(f *fidelity) { f.keysDisabled = on })
}

// SetIAMMessages makes injected errors whose code alone was given (FailNext,
// SetFailureRate, SetOutage, lost answers) carry the message IAM sends with
// that code ("The service is currently unavailable.", ...) instead of one
// starting with injectedPrefix. The call log's Injected field tells injected
// errors apart either way. Off by default.
func (s *Server) SetIAMMessages(on bool) {
	s.setFid(func(f *fidelity) { f.iamMessages = on })
}

// SetKnownRolesOnly makes SetIamPolicy refuse a role the fake does not know
// (its predefined roles, and those added with AddRoles) with
// INVALID_ARGUMENT "Role ROLE is not supported for this resource.", as IAM
// answers for a role it does not grant on that kind of resource. Which roles
// each kind of resource supports is IAM's (https://cloud.google.com/iam/docs/roles-permissions);
// the fake knows no kinds, so a known role is accepted everywhere. Off by
// default: every well-formed role is accepted.
func (s *Server) SetKnownRolesOnly(on bool) {
	s.setFid(func(f *fidelity) { f.knownRolesOnly = on })
}

// SetShuffleBindings makes every policy the fake answers list its bindings in
// an order drawn from a random source seeded with the fake's seed (see
// WithSeed), since IAM documents no order: code that depends on the order it
// wrote shows up. Off by default: bindings are answered in stored order.
func (s *Server) SetShuffleBindings(on bool) {
	s.setFid(func(f *fidelity) { f.shuffle = on })
}
