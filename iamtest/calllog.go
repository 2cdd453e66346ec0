package iamtest

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Call is one call the fake answered.
type Call struct {
	Method   Method     // the method called
	Resource string     // the resource the request named (see Calls)
	Code     codes.Code // the code answered: codes.OK for success
	Time     time.Time  // when the call arrived, on the fake's clock
}

// Calls returns the calls the fake answered since it started or since
// ResetCalls, in the order they ended, injected failures included. Each
// call's Resource is the request's resource field for the policy methods,
// its name for the service-account, key and role methods (a project for
// CreateServiceAccount and ListServiceAccounts), and its parent for
// ListRoles.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CountCalls returns how many logged calls were made to m; AnyMethod counts
// them all. It panics on an unknown method.
func (s *Server) CountCalls(m Method) int {
	mustMethod("CountCalls", m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == AnyMethod {
		return len(s.calls)
	}
	n := 0
	for _, c := range s.calls {
		if c.Method == m {
			n++
		}
	}
	return n
}

// ResetCalls empties the call log.
func (s *Server) ResetCalls() {
	s.mu.Lock()
	s.calls = nil
	s.mu.Unlock()
	s.fake.ResetCalls()
}

// intercept runs around every call, outside the fake's own fault layer: it
// answers outages and logs each call with its resource.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	call := Call{Method: Method(info.FullMethod), Resource: resourceOf(req), Time: s.fake.Now()}
	if code, ok := s.outage(call.Method); ok {
		err = s.fake.InjectedError(code, "outage: "+code.String()+" for "+info.FullMethod)
	} else {
		resp, err = handler(ctx, req)
	}
	call.Code = status.Code(err)
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	return resp, err
}

// resourceOf returns the resource a request names: its resource, name or
// parent field, the first one it has.
func resourceOf(req any) string {
	switch r := req.(type) {
	case interface{ GetResource() string }:
		return r.GetResource()
	case interface{ GetName() string }:
		return r.GetName()
	case interface{ GetParent() string }:
		return r.GetParent()
	}
	return ""
}
