package iamtest

import (
	"sync"
	"time"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/codes"
)

// attemptHeader is the incoming metadata key whose value Call.Attempt records.
const attemptHeader = "x-retry-attempt"

// Call is one call the fake answered.
type Call struct {
	Method   Method     // the method called
	Resource string     // the resource the request named (see Calls)
	Code     codes.Code // the code answered: codes.OK for success
	Time     time.Time  // when the call arrived, on the fake's clock
	Attempt  string     // the call's x-retry-attempt header ("1" for the first retry, ...), "" without one
	Injected bool       // the answer was an injected fault (an outage, a script, a rate, a lost answer), not the fake's own logic
	// Applied says the server acted: the method's logic ran and succeeded,
	// so a write committed, even when its answer was then lost (Injected
	// and UNAVAILABLE). False when the call failed before acting (an
	// injected fault before the method ran, or the fake's own refusal,
	// which changes nothing). Counting the Applied calls of a write proves
	// it landed exactly once. A deny policy write (CreatePolicy,
	// UpdatePolicy, DeletePolicy) is Applied once its long-running
	// operation has completed without error: false while it is pending
	// (SetDenyOperationDelay) and when it failed (a stale etag, a limit).
	Applied bool

	op *denyOp // a deny write's operation, which decides Applied
}

// callLog is the thread-safe list of calls, in order of completion.
type callLog struct {
	mu    sync.Mutex
	calls []Call
}

func (l *callLog) add(c Call) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// Calls returns the calls the fake answered since it started or since
// ResetCalls, in the order they ended, injected failures included. Each
// call's Resource is the request's resource field for the policy methods,
// its name for the service-account, key and role methods (a project for
// CreateServiceAccount and ListServiceAccounts), and its parent for
// ListRoles.
func (s *Server) Calls() []Call {
	s.log.mu.Lock()
	calls := append([]Call(nil), s.log.calls...)
	s.log.mu.Unlock()
	s.resolveDenyApplied(calls)
	return calls
}

// CountCalls returns how many logged calls were made to m; AnyMethod counts
// them all. It panics on an unknown method.
func (s *Server) CountCalls(m Method) int {
	mustMethod("CountCalls", m)
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	if m == AnyMethod {
		return len(s.log.calls)
	}
	n := 0
	for _, c := range s.log.calls {
		if c.Method == m {
			n++
		}
	}
	return n
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() {
	s.log.mu.Lock()
	s.log.calls = nil
	s.log.mu.Unlock()
}

// resourceOf returns the resource a request names: its resource field for
// the policy methods, its name for service accounts, keys and roles, its
// parent where it has neither (ListRoles); "" when it has none.
func resourceOf(req any) string {
	switch r := req.(type) {
	case interface{ GetResource() string }:
		return r.GetResource()
	case interface{ GetName() string }:
		return r.GetName()
	case interface{ GetParent() string }:
		return r.GetParent()
	case interface{ GetPolicy() *iamv2pb.Policy }: // UpdatePolicy
		return r.GetPolicy().GetName()
	}
	return ""
}
