package iamtest

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
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

// TestIamPermissions answers the permissions asked for that the caller
// holds: all of them unless SetCallerPermissions says otherwise; none for a
// resource that does not exist.
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
// resolve is nil, then applies the project registry (see RegisterProject) for
// the IAM method verb.
func (st *state) resolveLocked(resource, verb string, resolve resolver) (string, error) {
	key := st.canonicalLocked(resource)
	if resolve != nil {
		var err error
		if key, err = resolve(st, resource); err != nil {
			return "", err
		}
	}
	return st.projectKeyLocked(key, verb)
}

// getPolicy implements GetIamPolicy for every service: the stored policy, or
// within the stale-read window (SetStaleReads) the one before the last write;
// a conditional policy read below version 3 as SetConditionalRead says; the
// bindings shuffled when SetShuffleBindings is on.
func (s *Server) getPolicy(resource string, requested int32, resolve resolver) (*iampb.Policy, error) {
	if err := checkResource(resource); err != nil {
		return nil, err
	}
	fid := s.fid()
	now := s.now()
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweepRolesLocked(now)
	key, err := st.resolveLocked(resource, "getIamPolicy", resolve)
	if err != nil {
		return nil, err
	}
	stored := st.policyLocked(key)
	if w, ok := st.prev[key]; ok && fid.staleReads > 0 && now.Before(w.at.Add(fid.staleReads)) {
		stored = w.policy
	}
	out, err := readVersion(requested, stored, fid.condRead)
	if err != nil {
		return nil, err
	}
	if fid.shuffle {
		st.shuffleLocked(out)
	}
	return out, nil
}

// shuffleLocked puts p's bindings in an order drawn from the seeded source.
func (st *state) shuffleLocked(p *iampb.Policy) {
	st.shuffle.Shuffle(len(p.Bindings), func(i, j int) { p.Bindings[i], p.Bindings[j] = p.Bindings[j], p.Bindings[i] })
}

// SeedShuffle reseeds the random source of SetShuffleBindings: the same seed
// and the same reads give the same orders.
func (s *Server) SeedShuffle(seed int64) {
	st := s.state
	st.mu.Lock()
	st.shuffle = rand.New(rand.NewPCG(uint64(seed), pcgStream+1))
	st.mu.Unlock()
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
	fid := s.fid()
	now := s.now()
	delay, _ := s.propagation()
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
	st.sweepRolesLocked(now)
	key, err := st.resolveLocked(req.GetResource(), "setIamPolicy", resolve)
	if err != nil {
		return nil, err
	}
	cur := st.policyLocked(key)
	if mask.etag && len(in.GetEtag()) > 0 {
		if !bytes.Equal(in.GetEtag(), cur.GetEtag()) {
			return nil, status.Error(staleCode, concurrentChangeMessage)
		}
		if err := checkWriteVersion(in.GetVersion(), cur); err != nil {
			return nil, err
		}
	}
	next := proto.Clone(cur).(*iampb.Policy)
	if mask.bindings {
		if fid.knownRolesOnly {
			if err := st.checkKnownRoles(bindings); err != nil {
				return nil, err
			}
		}
		if err := st.checkCustomRoleGrantsLocked(cur, bindings); err != nil {
			return nil, err
		}
		if err := st.checkProjectRules(key, cur, bindings); err != nil {
			return nil, err
		}
		if fid.noOrgProjects {
			if err := checkLastOwner(key, cur, bindings); err != nil {
				return nil, err
			}
		}
		if err := st.checkGrantsLocked(cur, bindings, now, delay, fid.refuseUnknownSA); err != nil {
			return nil, err
		}
		next.Bindings = bindings
	}
	if mask.auditConfigs {
		next.AuditConfigs = nil
		for _, ac := range in.GetAuditConfigs() {
			next.AuditConfigs = append(next.AuditConfigs, proto.Clone(ac).(*iampb.AuditConfig))
		}
	}
	if err := checkPolicyPrincipals(next); err != nil {
		return nil, err
	}
	next.Version = lowestVersion(next)
	next.Etag = st.nextEtagLocked()
	st.storeLocked(key, next, now)
	out := proto.Clone(next).(*iampb.Policy)
	if fid.shuffle {
		st.shuffleLocked(out)
	}
	return out, nil
}

// bumpEtag is the interleaved writer of ConcurrentWriteNext: it rewrites the
// policy of resource unchanged, so that its etag moves.
func (s *Server) bumpEtag(resource string) {
	now := s.now()
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	key := st.canonicalLocked(resource)
	next := proto.Clone(st.policyLocked(key)).(*iampb.Policy)
	next.Etag = st.nextEtagLocked()
	next.Version = max(next.Version, 1)
	st.storeLocked(key, next, now)
}

// notOnProject are permissions that cannot be granted on a project, only on
// an organization: testing one on a project is a 400 Bad Request
// (https://github.com/googleapis/google-cloud-java/issues/722: "using
// resourcemanager.projects.create or resourcemanager.projects.list in a
// testPermissions call leads to a 400 Bad Request error ... Create and list
// should be tested on an organization").
var notOnProject = map[string]bool{"resourcemanager.projects.create": true, "resourcemanager.projects.list": true}

// checkProjectPermissions refuses, INVALID_ARGUMENT, a permission of
// notOnProject tested on projects/P. IAM's words for it are not in public
// sources: the message is the one IAM gives such a permission in a
// project's custom role ("Permission resourcemanager.projects.list is not
// valid.", https://github.com/terraform-google-modules/terraform-google-iam/issues/158).
func checkProjectPermissions(resource string, perms []string) error {
	project, ok := strings.CutPrefix(resource, "projects/")
	if !ok || strings.Contains(project, "/") {
		return nil
	}
	for _, p := range perms {
		if notOnProject[p] {
			return status.Errorf(codes.InvalidArgument, "Permission %s is not valid.", p)
		}
	}
	return nil
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
	if err := checkProjectPermissions(req.GetResource(), req.GetPermissions()); err != nil {
		return nil, err
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	key, err := st.resolveLocked(req.GetResource(), "testIamPermissions", resolve)
	if c := status.Code(err); c == codes.NotFound || c == codes.PermissionDenied {
		// "If the resource does not exist, this will return an empty set of
		// permissions, not a NOT_FOUND error." (google/iam/v1/iam_policy.proto)
		return &iampb.TestIamPermissionsResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	held, limited := st.heldPerms[key]
	out := &iampb.TestIamPermissionsResponse{}
	for _, p := range req.GetPermissions() {
		if (!limited || slices.Contains(held, p)) && !slices.Contains(out.Permissions, p) {
			out.Permissions = append(out.Permissions, p)
		}
	}
	return out, nil
}
