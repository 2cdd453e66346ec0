package iamtest

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/protobuf/proto"
)

// emptyPolicyEtag is the etag of a resource whose policy was never written:
// the bytes that IAM sends for an empty policy (base64 "ACAB"). Treat it as
// read-only; the fake hands out copies.
var emptyPolicyEtag = []byte{0x00, 0x20, 0x01}

// concurrentChangeMessage is IAM's message for ABORTED when SetIamPolicy
// carries an etag that is no longer the current one.
const concurrentChangeMessage = "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff."

// state is everything the fake stores: policies, service accounts, keys.
// One mutex guards it all, so each call sees and makes a consistent change.
type state struct {
	mu       sync.Mutex
	policies map[string]*iampb.Policy // resource -> stored policy (etag set)
	etagSeq  uint64

	accounts map[string]*account // canonical name -> account
	idSeq    uint64
	keySeq   uint64

	prev map[string]written // resource -> what it held before its last write

	projects  map[string]string        // registered project ID -> number
	numbers   map[string]string        // registered project number -> ID
	invited   map[string]bool          // "projects/ID member" invited to be an owner
	roles     map[string]bool          // roles added with AddRoles
	rolePerms map[string]*adminpb.Role // predefined roles given by SetPredefinedRole
	shuffle   *rand.Rand               // the order of answered bindings (SetShuffleBindings)

	customRoles     map[string]*customRole     // custom role name -> role (customroles.go)
	deletedAccounts map[string]*deletedAccount // unique ID -> deleted account (accountwrites.go)
	heldPerms       map[string][]string        // resource -> the permissions the caller holds (SetCallerPermissions)
	principals      map[string]string          // users and groups that exist (SetKnownPrincipals), folded -> as given; nil: all
}

// written is the policy a resource held before a write, and when the write
// was made, for stale reads.
type written struct {
	policy *iampb.Policy
	at     time.Time
}

// account is a stored service account and its propagation bookkeeping.
type account struct {
	sa        *adminpb.ServiceAccount
	created   time.Time
	readsLeft int // reads that still answer NOT_FOUND
	hidden    int // hidden reads answered so far (they pick the propagation code)
	keys      []*adminpb.ServiceAccountKey
}

func newState(seed int64) *state {
	return &state{
		policies:  map[string]*iampb.Policy{},
		accounts:  map[string]*account{},
		prev:      map[string]written{},
		projects:  map[string]string{},
		numbers:   map[string]string{},
		invited:   map[string]bool{},
		roles:     map[string]bool{},
		rolePerms: map[string]*adminpb.Role{},
		shuffle:   rand.New(rand.NewPCG(uint64(seed), pcgStream+1)),

		customRoles:     map[string]*customRole{},
		deletedAccounts: map[string]*deletedAccount{},
		heldPerms:       map[string][]string{},
	}
}

// emptyPolicy is what a never-written resource holds: version 0 and the etag
// ACAB, as IAM answers it ({"etag": "ACAB"}: the version field is absent).
func emptyPolicy() *iampb.Policy {
	return &iampb.Policy{Etag: bytes.Clone(emptyPolicyEtag)}
}

// storeLocked stores next as the policy of key, remembering what it held
// before (for stale reads) as of now. st.mu must be held.
func (st *state) storeLocked(key string, next *iampb.Policy, now time.Time) {
	st.prev[key] = written{policy: st.policyLocked(key), at: now}
	st.policies[key] = next
}

// policyLocked returns the stored policy of resource (not a copy), or the
// empty policy. s.mu must be held.
func (st *state) policyLocked(resource string) *iampb.Policy {
	if p, ok := st.policies[resource]; ok {
		return p
	}
	return emptyPolicy()
}

// nextEtagLocked mints an etag never handed out before by this fake:
// 0x07 then a big-endian counter, like the "BwX..." etags IAM sends.
func (st *state) nextEtagLocked() []byte {
	st.etagSeq++
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, st.etagSeq)
	b[0] = 0x07
	return b
}

// Policy returns a copy of the policy stored for resource, as GetIamPolicy
// asking for version 3 answers it once every write has propagated: without
// stale reads (SetStaleReads), shuffled bindings (SetShuffleBindings),
// faults or a logged call. A resource never written has IAM's empty
// policy: no bindings, version 0 and the etag "ACAB" (base64), as
// GetIamPolicy answers it. Service accounts may be named in any form the
// admin API accepts.
func (s *Server) Policy(resource string) *iampb.Policy {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	return proto.Clone(st.policyLocked(st.canonicalLocked(resource))).(*iampb.Policy)
}

// seedPolicy stores a copy of p as the policy of resource, with no validation
// and no fault injection, as if it had been written long ago: bindings
// without members are dropped, the version is set to the lowest that
// represents the policy, and a fresh etag is minted unless p carries one.
// It returns a copy of what was stored. A nil p removes the policy.
func (s *Server) seedPolicy(resource string, p *iampb.Policy) *iampb.Policy {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	resource = st.canonicalLocked(resource)
	delete(st.prev, resource)
	if p == nil {
		delete(st.policies, resource)
		return emptyPolicy()
	}
	stored := proto.Clone(p).(*iampb.Policy)
	stored.Bindings = dropEmptyBindings(stored.Bindings)
	stored.Version = lowestVersion(stored)
	if len(stored.Etag) == 0 {
		stored.Etag = st.nextEtagLocked()
	}
	st.policies[resource] = stored
	return proto.Clone(stored).(*iampb.Policy)
}
