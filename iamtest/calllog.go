package iamtest

import (
	"time"

	"google.golang.org/grpc/codes"
)

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
	// it landed exactly once.
	Applied bool
}

// Calls returns the calls the fake answered since it started or since
// ResetCalls, in the order they ended, injected failures included. Each
// call's Resource is the request's resource field for the policy methods,
// its name for the service-account, key and role methods (a project for
// CreateServiceAccount and ListServiceAccounts), and its parent for
// ListRoles.
func (s *Server) Calls() []Call {
	fc := s.fake.Calls()
	calls := make([]Call, len(fc))
	for i, c := range fc {
		calls[i] = Call{Method: Method(c.Method), Resource: c.Resource, Code: c.Code, Time: c.Time, Attempt: c.Attempt, Injected: c.Injected, Applied: c.Applied}
	}
	return calls
}

// CountCalls returns how many logged calls were made to m; AnyMethod counts
// them all. It panics on an unknown method.
func (s *Server) CountCalls(m Method) int {
	mustMethod("CountCalls", m)
	return s.fake.CountCalls(string(m))
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() { s.fake.ResetCalls() }
