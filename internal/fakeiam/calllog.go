package fakeiam

import (
	"sync"
	"time"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/codes"
)

// attemptHeader is the incoming metadata key whose value Call.Attempt records.
const attemptHeader = "x-retry-attempt"

// Call is one call the fake received, as recorded in its call log.
type Call struct {
	Method   string     // full gRPC method name, e.g. MethodGetIamPolicy
	Resource string     // the resource the request names (see resourceOf)
	Time     time.Time  // when the call arrived, on the fake's clock
	Code     codes.Code // the code answered; codes.OK for success
	Attempt  string     // the x-retry-attempt metadata value, "" if absent
	Injected bool       // the answer was an injected fault (not the fake's logic)
	// Applied says the server acted: the method's own logic ran and
	// succeeded, so a write committed, even when its answer was then lost
	// (Injected, UNAVAILABLE). False when the call failed before acting: an
	// injected fault before the handler, or the fake's own refusal (which
	// changes nothing). A test proves "landed exactly once" by counting the
	// Applied calls of a write method.
	Applied bool
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

// Calls returns a copy of the call log: every call of an implemented or
// unimplemented method of a registered service, in the order the calls
// finished.
func (s *Server) Calls() []Call {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return append([]Call(nil), s.log.calls...)
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() {
	s.log.mu.Lock()
	s.log.calls = nil
	s.log.mu.Unlock()
}

// CountCalls returns how many logged calls were made to method; AnyMethod
// counts them all.
func (s *Server) CountCalls(method string) int {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	if method == AnyMethod {
		return len(s.log.calls)
	}
	n := 0
	for _, c := range s.log.calls {
		if c.Method == method {
			n++
		}
	}
	return n
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
