package fakeiam

import (
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// This file holds the hooks that package iamtest, the public face of the
// fake, needs and the rest of the fake does not.

// NewWithInterceptor is New with outer run around every call, outside the
// fake's own fault layer and call log: outer sees each call as the client sent
// it (its request) and the answer the fake gave, injected faults included, and
// may answer a call itself without calling its handler. outer must be safe for
// concurrent use. A nil outer makes it New.
func NewWithInterceptor(outer grpc.UnaryServerInterceptor, opts ...Option) *Server {
	s := New(opts...)
	if outer == nil {
		return s
	}
	s.grpc.Stop() // never served: this only releases its registration
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(outer, s.intercept))
	registerServices(s)
	return s
}

// registerServices registers the fake's services on s.grpc, as New does.
// TestNewWithInterceptorServesWhatNewServes keeps the two lists the same.
func registerServices(s *Server) {
	policies := &policyService{s: s}
	iampb.RegisterIAMPolicyServer(s.grpc, policies)
	adminpb.RegisterIAMServer(s.grpc, &adminService{s: s})
	resourcemanagerpb.RegisterProjectsServer(s.grpc, &projectsService{p: policies})
	resourcemanagerpb.RegisterFoldersServer(s.grpc, &foldersService{p: policies})
	resourcemanagerpb.RegisterOrganizationsServer(s.grpc, &organizationsService{p: policies})
}

// InjectedError returns the error the fault layer injects for code: its
// message is InjectedPrefix followed by msg, and it carries the RetryInfo
// detail set by SetRetryInfo, if any. It panics if code is OK.
func (s *Server) InjectedError(code codes.Code, msg string) error {
	mustFailCode("InjectedError", code)
	return s.faults.injectedError(code, nil, "", msg, s.fid().iamMessages)
}

// Now reads the fake's clock (see WithClock).
func (s *Server) Now() time.Time { return s.now() }
