package fakeiam

import (
	"bytes"
	"context"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// policyService serves google.iam.v1.IAMPolicy over the shared store. The
// resourcemanager services and the admin service reuse its logic.
type policyService struct {
	iampb.UnimplementedIAMPolicyServer
	s *Server
}

// GetIamPolicy answers the policy of any resource; a resource never written
// has the empty policy.
func (p *policyService) GetIamPolicy(_ context.Context, req *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return p.s.getPolicy(req.GetResource(), req.GetOptions().GetRequestedPolicyVersion(), nil)
}

// SetIamPolicy writes the policy of any resource.
func (p *policyService) SetIamPolicy(_ context.Context, req *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
	return p.s.setPolicy(req, nil)
}

// TestIamPermissions answers every valid permission asked for: the fake's
// caller holds them all.
func (p *policyService) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	return p.s.testPermissions(req, nil)
}

// resolver maps a resource name to the key the store uses, or fails (the
// admin service's NOT_FOUND for a missing or propagating account). st.mu is
// held while it runs.
type resolver func(st *state, resource string) (string, error)

func checkResource(resource string) error {
	if resource == "" {
		return status.Error(codes.InvalidArgument, "the resource name must not be empty")
	}
	return nil
}

// resolveLocked applies resolve, or canonicalizes service account names when
// resolve is nil.
func (st *state) resolveLocked(resource string, resolve resolver) (string, error) {
	if resolve == nil {
		return st.canonicalLocked(resource), nil
	}
	return resolve(st, resource)
}

// getPolicy implements GetIamPolicy for every service.
func (s *Server) getPolicy(resource string, requested int32, resolve resolver) (*iampb.Policy, error) {
	if err := checkResource(resource); err != nil {
		return nil, err
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	key, err := st.resolveLocked(resource, resolve)
	if err != nil {
		return nil, err
	}
	stored := st.policyLocked(key)
	if err := checkRequestedVersion(requested, stored); err != nil {
		return nil, err
	}
	return proto.Clone(stored).(*iampb.Policy), nil
}

// updateMask is the parsed update_mask of SetIamPolicy.
type updateMask struct{ bindings, etag, auditConfigs bool }

func parseMask(paths []string) (updateMask, error) {
	if len(paths) == 0 {
		return updateMask{bindings: true, etag: true}, nil // IAM's default
	}
	var m updateMask
	for _, p := range paths {
		switch p {
		case "bindings":
			m.bindings = true
		case "etag":
			m.etag = true
		case "audit_configs", "auditConfigs":
			m.auditConfigs = true
		case "version":
			// The stored version is always derived from the bindings.
		default:
			return m, status.Errorf(codes.InvalidArgument,
				"invalid update_mask path %q: the paths may be bindings, etag, audit_configs and version", p)
		}
	}
	return m, nil
}

// setPolicy implements SetIamPolicy for every service.
func (s *Server) setPolicy(req *iampb.SetIamPolicyRequest, resolve resolver) (*iampb.Policy, error) {
	if err := checkResource(req.GetResource()); err != nil {
		return nil, err
	}
	in := req.GetPolicy()
	if in == nil {
		return nil, status.Error(codes.InvalidArgument, "the policy must be set")
	}
	staleCode := s.staleEtagCode()
	mask, err := parseMask(req.GetUpdateMask().GetPaths())
	if err != nil {
		return nil, err
	}
	var bindings []*iampb.Binding
	if mask.bindings {
		if bindings, err = normalizeBindings(in.GetBindings(), in.GetVersion()); err != nil {
			return nil, err
		}
	}
	if mask.auditConfigs {
		if err := validateAuditConfigs(in.GetAuditConfigs()); err != nil {
			return nil, err
		}
	}

	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	key, err := st.resolveLocked(req.GetResource(), resolve)
	if err != nil {
		return nil, err
	}
	cur := st.policyLocked(key)
	if mask.etag && len(in.GetEtag()) > 0 && !bytes.Equal(in.GetEtag(), cur.GetEtag()) {
		return nil, status.Error(staleCode, ConcurrentChangeMessage)
	}
	next := proto.Clone(cur).(*iampb.Policy)
	if mask.bindings {
		next.Bindings = bindings
	}
	if mask.auditConfigs {
		next.AuditConfigs = nil
		for _, ac := range in.GetAuditConfigs() {
			next.AuditConfigs = append(next.AuditConfigs, proto.Clone(ac).(*iampb.AuditConfig))
		}
	}
	next.Version = lowestVersion(next)
	next.Etag = st.nextEtagLocked()
	st.policies[key] = next
	return proto.Clone(next).(*iampb.Policy), nil
}

// bumpEtag is the interleaved writer of ConcurrentWriteNext: it rewrites the
// policy of resource unchanged, so that its etag moves.
func (s *Server) bumpEtag(resource string) {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	key := st.canonicalLocked(resource)
	next := proto.Clone(st.policyLocked(key)).(*iampb.Policy)
	next.Etag = st.nextEtagLocked()
	st.policies[key] = next
}

// testPermissions implements TestIamPermissions for every service.
func (s *Server) testPermissions(req *iampb.TestIamPermissionsRequest, resolve resolver) (*iampb.TestIamPermissionsResponse, error) {
	if err := checkResource(req.GetResource()); err != nil {
		return nil, err
	}
	for _, p := range req.GetPermissions() {
		if p == "" || strings.ContainsAny(p, "* ") || strings.Count(p, ".") < 2 {
			return nil, status.Errorf(codes.InvalidArgument,
				"invalid permission %q: a permission is SERVICE.RESOURCE.VERB, without wildcards", p)
		}
	}
	if resolve != nil {
		st := s.state
		st.mu.Lock()
		_, err := resolve(st, req.GetResource())
		st.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return &iampb.TestIamPermissionsResponse{Permissions: append([]string(nil), req.GetPermissions()...)}, nil
}
