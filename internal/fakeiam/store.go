package fakeiam

import (
	"bytes"
	"encoding/binary"
	"sync"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/protobuf/proto"
)

// EmptyPolicyEtag is the etag of a resource whose policy was never written:
// the bytes that IAM sends for an empty policy (base64 "ACAB"). Treat it as
// read-only; the fake hands out copies.
var EmptyPolicyEtag = []byte{0x00, 0x20, 0x01}

// ConcurrentChangeMessage is IAM's message for ABORTED when SetIamPolicy
// carries an etag that is no longer the current one.
const ConcurrentChangeMessage = "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff."

// state is everything the fake stores: policies, service accounts, keys.
// One mutex guards it all, so each call sees and makes a consistent change.
type state struct {
	mu       sync.Mutex
	policies map[string]*iampb.Policy // resource -> stored policy (etag set)
	etagSeq  uint64

	accounts map[string]*account // canonical name -> account
	idSeq    uint64
	keySeq   uint64
}

// account is a stored service account and its propagation bookkeeping.
type account struct {
	sa        *adminpb.ServiceAccount
	created   time.Time
	readsLeft int // reads that still answer NOT_FOUND
	keys      []*adminpb.ServiceAccountKey
}

func newState() *state {
	return &state{
		policies: map[string]*iampb.Policy{},
		accounts: map[string]*account{},
	}
}

// emptyPolicy is what a never-written resource holds.
func emptyPolicy() *iampb.Policy {
	return &iampb.Policy{Version: 1, Etag: bytes.Clone(EmptyPolicyEtag)}
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

// Policy returns a copy of the policy stored for resource, exactly as
// GetIamPolicy with requested version 3 would answer it: the empty policy
// (version 1, EmptyPolicyEtag) when none was written. Service account names
// may be given in any form the admin API accepts.
func (s *Server) Policy(resource string) *iampb.Policy {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	return proto.Clone(st.policyLocked(st.canonicalLocked(resource))).(*iampb.Policy)
}

// SeedPolicy stores a copy of p as the policy of resource, with no validation
// and no fault injection, as if it had been written long ago: bindings
// without members are dropped, the version is set to the lowest that
// represents the policy, and a fresh etag is minted unless p carries one.
// It returns a copy of what was stored. A nil p removes the policy.
func (s *Server) SeedPolicy(resource string, p *iampb.Policy) *iampb.Policy {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	resource = st.canonicalLocked(resource)
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
