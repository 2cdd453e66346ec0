package iamtest

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Methods of google.iam.v2.Policies, the deny policies of IAM v2
// (iam/apiv2's PoliciesClient, gRPC and REST), and the
// google.longrunning.Operations method their operations are polled with
// (PoliciesClient.GetOperation, and the Wait and Poll of the operations that
// CreatePolicy, UpdatePolicy and DeletePolicy return).
const (
	MethodListPolicies Method = iamv2pb.Policies_ListPolicies_FullMethodName
	MethodGetPolicy    Method = iamv2pb.Policies_GetPolicy_FullMethodName
	MethodCreatePolicy Method = iamv2pb.Policies_CreatePolicy_FullMethodName
	MethodUpdatePolicy Method = iamv2pb.Policies_UpdatePolicy_FullMethodName
	MethodDeletePolicy Method = iamv2pb.Policies_DeletePolicy_FullMethodName
	MethodGetOperation Method = longrunningpb.Operations_GetOperation_FullMethodName
)

const (
	denyPolicyKind      = "DenyPolicy"   // Policy.kind: "Always contains the value `DenyPolicy`"
	denyPoliciesSegment = "denypolicies" // the kind of policy in a name
)

// Limits of deny policies, from https://cloud.google.com/iam/docs/deny-overview
// ("Each resource can have up to 500 deny policies. Together, these deny
// policies can contain a total of 500 deny rules.") and the field comments
// of google/iam/v2/policy.proto (display_name "up to 63 characters",
// annotations "Keys can be up to 63 characters. Values can be up to 255
// characters.", a rule's description "up to 256 characters"). IAM's codes
// and messages for them are not documented: the fake answers
// FAILED_PRECONDITION past the policy count and INVALID_ARGUMENT past the
// rule count, with messages of its own.
const (
	maxDenyPoliciesPerAttachmentPoint = 500
	maxDenyRulesPerAttachmentPoint    = 500
)

// denyState holds the deny policies and their long-running operations. Its
// own mutex guards it; it never takes the state's mutex while held.
type denyState struct {
	mu       sync.Mutex
	policies map[string]*iamv2pb.Policy // canonical name -> stored policy
	ops      map[string]*denyOp         // operation name -> operation
	pending  []*denyOp                  // not done yet, in the order they were made
	seq      uint64                     // etags, uids and operation IDs

	delay     time.Duration // SetDenyOperationDelay
	staleInOp bool          // SetDenyStaleEtagInOperation
}

// denyOp is one long-running operation of CreatePolicy, UpdatePolicy or
// DeletePolicy: the change it makes when it completes, at due.
type denyOp struct {
	name    string
	method  Method // MethodCreatePolicy, MethodUpdatePolicy or MethodDeletePolicy
	target  string // canonical policy name
	policy  *iamv2pb.Policy
	etag    string // the etag to check at completion; "" for none
	created time.Time
	due     time.Time
	seq     uint64
	done    *longrunningpb.Operation // set when completed
}

func newDenyState() *denyState {
	return &denyState{policies: map[string]*iamv2pb.Policy{}, ops: map[string]*denyOp{}}
}

// SetDenyOperationDelay makes the long-running operations of CreatePolicy,
// UpdatePolicy and DeletePolicy complete d after their call on the fake's
// clock (see WithClock): until then the operation answers not done
// (GetOperation, op.Poll) and the change is not visible to GetPolicy and
// ListPolicies; it takes effect when the operation completes, and its etag
// is checked again then (see SetDenyStaleEtagInOperation). d == 0, the
// default, completes every operation within its call, which answers it
// done. IAM does not document how long its operations take. With a
// VirtualClock, Advance(d) completes them in no real time, and op.Wait then
// returns at its first poll; call Advance first, for Wait sleeps on real
// timers between polls (inside testing/synctest's bubble those timers are
// the bubble's). It panics on a negative d.
func (s *Server) SetDenyOperationDelay(d time.Duration) {
	mustDuration("SetDenyOperationDelay", d)
	ds := s.deny
	ds.mu.Lock()
	ds.delay = max(d, 0)
	ds.mu.Unlock()
}

// SetDenyStaleEtagInOperation chooses where UpdatePolicy and DeletePolicy
// answer an etag that is not the policy's current one. Off, the default, the
// call fails ABORTED (409), as google/iam/v2/policy.proto documents ("If the
// etag values do not match, the request fails with a 409 error code and
// ABORTED status"; SetStaleEtagCode changes the code). On, the call returns
// an operation that completes with that error: code that waits on the
// operation must treat its error as the conflict it is. Either way a write
// whose operation is overtaken by another write before it completes (see
// SetDenyOperationDelay) fails in the operation.
func (s *Server) SetDenyStaleEtagInOperation(on bool) {
	ds := s.deny
	ds.mu.Lock()
	ds.staleInOp = on
	ds.mu.Unlock()
}

// DenyPolicy returns a copy of the deny policy name as GetPolicy would
// answer it (operations due by now on the fake's clock completed first),
// without a fault or a logged call, or nil when there is none. A registered
// project (RegisterProject) may be named by ID or number; answers name it
// by number, as IAM's do.
func (s *Server) DenyPolicy(name string) *iamv2pb.Policy {
	canon, err := s.denyPolicyName(name)
	if err != nil {
		return nil
	}
	_, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	if p, ok := ds.policies[canon]; ok {
		return proto.Clone(p).(*iamv2pb.Policy)
	}
	return nil
}

// seedDenyPolicy is SeedDenyPolicy answering an error instead of panicking.
func (s *Server) seedDenyPolicy(name string, p *iamv2pb.Policy) (*iamv2pb.Policy, error) {
	canon, err := s.denyPolicyName(name)
	if err != nil {
		return nil, err
	}
	if p != nil {
		if err := s.checkDenyEmailCase(p); err != nil {
			return nil, err
		}
	}
	now, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	if p == nil {
		delete(ds.policies, canon)
		return nil, nil
	}
	if err := validateDenyPolicy(p); err != nil {
		return nil, err
	}
	if err := ds.limitsLocked(canon, len(p.GetRules())); err != nil {
		return nil, err
	}
	stored := ds.newPolicyLocked(canon, p, now)
	ds.policies[canon] = stored
	return proto.Clone(stored).(*iamv2pb.Policy), nil
}

// newPolicyLocked builds the stored form of a created policy.
func (ds *denyState) newPolicyLocked(canon string, p *iamv2pb.Policy, now time.Time) *iamv2pb.Policy {
	ds.seq++
	return &iamv2pb.Policy{
		Name:        canon,
		Uid:         fmt.Sprintf("%08x-0000-4000-8000-%012x", ds.seq, ds.seq),
		Kind:        denyPolicyKind,
		DisplayName: p.GetDisplayName(),
		Annotations: maps.Clone(p.GetAnnotations()),
		Etag:        ds.nextEtagLocked(),
		CreateTime:  timestamppb.New(now),
		UpdateTime:  timestamppb.New(now),
		Rules:       cloneRules(p.GetRules()),
	}
}

func cloneRules(rs []*iamv2pb.PolicyRule) []*iamv2pb.PolicyRule {
	out := make([]*iamv2pb.PolicyRule, len(rs))
	for i, r := range rs {
		out[i] = proto.Clone(r).(*iamv2pb.PolicyRule)
	}
	return out
}

// nextEtagLocked mints an etag never handed out before by this store: the
// base64 of 0x07 and a big-endian counter, as IAM's "BwX..." etags look.
func (ds *denyState) nextEtagLocked() string {
	ds.seq++
	b := binary.BigEndian.AppendUint64(nil, ds.seq)
	b[0] = 0x07
	return base64.StdEncoding.EncodeToString(b)
}

// bumpDenyEtag rewrites the deny policy name unchanged, with a new etag, as
// another writer would (ConcurrentWriteNext). A policy that does not exist
// is left alone.
func (s *Server) bumpDenyEtag(name string) {
	canon, err := s.denyPolicyName(name)
	if err != nil {
		return
	}
	now, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	if p, ok := ds.policies[canon]; ok {
		next := proto.Clone(p).(*iamv2pb.Policy)
		next.Etag = ds.nextEtagLocked()
		next.UpdateTime = timestamppb.New(now)
		ds.policies[canon] = next
	}
}

// denyWriteTarget returns the policy an etag-guarded deny write names, for
// ConcurrentWriteNext.
func denyWriteTarget(req any) (string, bool) {
	switch r := req.(type) {
	case *iamv2pb.UpdatePolicyRequest:
		return r.GetPolicy().GetName(), r.GetPolicy().GetName() != ""
	case *iamv2pb.DeletePolicyRequest:
		return r.GetName(), r.GetName() != ""
	}
	return "", false
}

// ---- names ----

// attachmentPrefix is the service of every attachment point of deny
// policies: projects, folders and organizations
// (https://cloud.google.com/iam/docs/deny-overview#attachment-point).
const attachmentPrefix = "cloudresourcemanager.googleapis.com/"

// denyParent checks policies/{attachment_point}/denypolicies and returns its
// canonical form: the attachment point URL-encoded with %2F, and a
// registered project's ID replaced by its number ("Responses always contain
// the numeric ID", policy.proto).
func (s *Server) denyParent(parent string) (string, error) {
	segs := strings.Split(parent, "/")
	if len(segs) != 3 || segs[0] != "policies" || segs[1] == "" {
		return "", status.Errorf(codes.InvalidArgument,
			"invalid parent %q: expected policies/{attachment_point}/denypolicies, the attachment point URL-encoded (%%2F for /), such as policies/cloudresourcemanager.googleapis.com%%2Fprojects%%2Fmy-project/denypolicies", parent)
	}
	if segs[2] != denyPoliciesSegment {
		return "", status.Errorf(codes.InvalidArgument, "invalid policy kind %q in %q: the kind of policy must be denypolicies", segs[2], parent)
	}
	attach, err := s.attachmentPoint(segs[1])
	if err != nil {
		return "", err
	}
	return "policies/" + attach + "/" + denyPoliciesSegment, nil
}

// denyPolicyName checks policies/{attachment_point}/denypolicies/{policy_id}
// and returns its canonical form (see denyParent).
func (s *Server) denyPolicyName(name string) (string, error) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", status.Errorf(codes.InvalidArgument, "invalid policy name %q: expected policies/{attachment_point}/denypolicies/{policy_id}", name)
	}
	parent, err := s.denyParent(name[:i])
	if err != nil {
		return "", status.Errorf(codes.InvalidArgument, "invalid policy name %q: expected policies/{attachment_point}/denypolicies/{policy_id}: %s", name, status.Convert(err).Message())
	}
	if id := name[i+1:]; !validDenyPolicyID(id) {
		return "", status.Errorf(codes.NotFound, "policy %q not found", name)
	}
	return parent + "/" + name[i+1:], nil
}

// attachmentPoint decodes and checks an URL-encoded attachment point and
// returns it canonical.
func (s *Server) attachmentPoint(enc string) (string, error) {
	full, err := url.PathUnescape(enc)
	if err != nil || strings.Count(full, "/") != 2 || full == enc {
		return "", status.Errorf(codes.InvalidArgument,
			"invalid attachment point %q: expected the URL-encoded full resource name of a project, folder or organization, such as cloudresourcemanager.googleapis.com%%2Fprojects%%2Fmy-project", enc)
	}
	rest, ok := strings.CutPrefix(full, attachmentPrefix)
	kind, id, _ := strings.Cut(rest, "/")
	numeric := id != "" && strings.Trim(id, "0123456789") == "" && id[0] != '0'
	switch {
	case !ok:
		return "", status.Errorf(codes.InvalidArgument, "invalid attachment point %q: deny policies attach to projects, folders and organizations (%s...)", full, attachmentPrefix)
	case kind == "projects" && (numeric || validProjectID(id)):
		if !numeric {
			id = s.projectNumber(id)
		}
	case (kind == "folders" || kind == "organizations") && numeric:
	case kind == "folders" || kind == "organizations":
		return "", status.Errorf(codes.InvalidArgument, "invalid attachment point %q: for organizations and folders, use the numeric ID", full)
	default:
		return "", status.Errorf(codes.InvalidArgument, "invalid attachment point %q: expected %sprojects/ID, folders/NUMBER or organizations/NUMBER", full, attachmentPrefix)
	}
	return url.PathEscape(attachmentPrefix + kind + "/" + id), nil
}

// ProjectNumber returns the number the deny policies' answers name project
// id by ("Responses always contain the numeric ID", google/iam/v2/policy.proto):
// its registered number (RegisterProject, a seed file's number), else one
// derived from the ID, the same in every run (12 digits, from the FNV-1a
// hash of the ID). A request may name the project by either. It panics on
// an ID that is not 6 to 30 lowercase letters, digits and hyphens.
func (s *Server) ProjectNumber(id string) string {
	if !validProjectID(id) {
		panic(fmt.Sprintf("iamtest: ProjectNumber: invalid project ID %q: 6 to 30 lowercase letters, digits or hyphens, starting with a letter", id))
	}
	return s.projectNumber(id)
}

// projectNumber returns the number of a project ID: the registered one
// (RegisterProject, a seed file's number), else one derived from the ID,
// the same in every run: 12 digits, as IAM's project numbers are, from the
// FNV-1a hash of the ID.
func (s *Server) projectNumber(id string) string {
	st := s.state
	st.mu.Lock()
	n, ok := st.projects[id]
	st.mu.Unlock()
	if ok {
		return n
	}
	return derivedProjectNumber(id)
}

// derivedProjectNumber is the number of an unregistered project ID.
func derivedProjectNumber(id string) string {
	h := fnv.New64a()
	h.Write([]byte(id))
	return strconv.FormatUint(100_000_000_000+h.Sum64()%900_000_000_000, 10)
}

// validDenyPolicyID applies policy.proto's rule for policy_id: "The ID must
// contain 3 to 63 characters. It can contain lowercase letters and numbers,
// as well as dashes (`-`) and periods (`.`). The first character must be a
// lowercase letter."
func validDenyPolicyID(id string) bool {
	if len(id) < 3 || len(id) > 63 || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// ---- operations ----

// completeDueLocked completes every pending operation due by now, in the
// order they are due (then made). ds.mu must be held.
func (s *Server) completeDueLocked(now time.Time) {
	ds := s.deny
	var due []*denyOp
	ds.pending = slices.DeleteFunc(ds.pending, func(op *denyOp) bool {
		if op.due.After(now) {
			return false
		}
		due = append(due, op)
		return true
	})
	slices.SortStableFunc(due, func(a, b *denyOp) int {
		if c := a.due.Compare(b.due); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for _, op := range due {
		resp, err := s.applyLocked(op)
		op.done = &longrunningpb.Operation{Name: op.name, Metadata: opMetadata(op.created), Done: true}
		if err != nil {
			op.done.Result = &longrunningpb.Operation_Error{Error: status.Convert(err).Proto()}
		} else {
			a, _ := anypb.New(resp)
			op.done.Result = &longrunningpb.Operation_Response{Response: a}
		}
	}
}

// applyLocked makes the change of op, at its due time, checking again what
// may have changed since the call: the policy's existence, its etag and the
// limits. ds.mu must be held.
func (s *Server) applyLocked(op *denyOp) (*iamv2pb.Policy, error) {
	ds := s.deny
	cur, exists := ds.policies[op.target]
	switch op.method {
	case MethodCreatePolicy:
		if exists {
			return nil, status.Errorf(codes.AlreadyExists, "policy %s already exists", op.target)
		}
		if err := ds.limitsLocked(op.target, len(op.policy.GetRules())); err != nil {
			return nil, err
		}
		p := ds.newPolicyLocked(op.target, op.policy, op.due)
		ds.policies[op.target] = p
		return proto.Clone(p).(*iamv2pb.Policy), nil
	case MethodUpdatePolicy:
		if !exists {
			return nil, status.Errorf(codes.NotFound, "policy %s not found", op.target)
		}
		if op.etag != "" && op.etag != cur.GetEtag() {
			return nil, status.Error(s.staleEtagCode(), concurrentChangeMessage)
		}
		if err := ds.limitsLocked(op.target, len(op.policy.GetRules())); err != nil {
			return nil, err
		}
		next := proto.Clone(cur).(*iamv2pb.Policy)
		next.DisplayName = op.policy.GetDisplayName()
		next.Rules = cloneRules(op.policy.GetRules())
		next.Etag = ds.nextEtagLocked()
		next.UpdateTime = timestamppb.New(op.due)
		ds.policies[op.target] = next
		return proto.Clone(next).(*iamv2pb.Policy), nil
	default: // MethodDeletePolicy
		if !exists {
			return nil, status.Errorf(codes.NotFound, "policy %s not found", op.target)
		}
		if op.etag != "" && op.etag != cur.GetEtag() {
			return nil, status.Error(s.staleEtagCode(), concurrentChangeMessage)
		}
		delete(ds.policies, op.target)
		gone := proto.Clone(cur).(*iamv2pb.Policy)
		gone.DeleteTime = timestamppb.New(op.due)
		return gone, nil
	}
}

func opMetadata(created time.Time) *anypb.Any {
	a, _ := anypb.New(&iamv2pb.PolicyOperationMetadata{CreateTime: timestamppb.New(created)})
	return a
}

// startOpLocked records the operation of a write, and completes it at once
// when the delay is zero. It returns the operation as the call answers it.
func (s *Server) startOpLocked(method Method, target string, p *iamv2pb.Policy, etag string, now time.Time) *longrunningpb.Operation {
	ds := s.deny
	ds.seq++
	op := &denyOp{
		name:    target + "/operations/" + strconv.FormatUint(ds.seq, 10),
		method:  method,
		target:  target,
		policy:  p,
		etag:    etag,
		created: now,
		due:     now.Add(ds.delay),
		seq:     ds.seq,
	}
	ds.ops[op.name] = op
	ds.pending = append(ds.pending, op)
	s.completeDueLocked(now)
	return op.answer()
}

// answer is the operation as GetOperation answers it.
func (op *denyOp) answer() *longrunningpb.Operation {
	if op.done != nil {
		return proto.Clone(op.done).(*longrunningpb.Operation)
	}
	return &longrunningpb.Operation{Name: op.name, Metadata: opMetadata(op.created)}
}

// limitsLocked checks the limits of an attachment point if the policy
// target held rules rules. ds.mu must be held.
func (ds *denyState) limitsLocked(target string, rules int) error {
	parent := target[:strings.LastIndexByte(target, '/')+1]
	policies, total := 1, rules
	for name, p := range ds.policies {
		if name != target && strings.HasPrefix(name, parent) {
			policies++
			total += len(p.GetRules())
		}
	}
	if policies > maxDenyPoliciesPerAttachmentPoint {
		return status.Errorf(codes.FailedPrecondition,
			"iamtest: the attachment point of %s would have %d deny policies: each resource can have up to %d", target, policies, maxDenyPoliciesPerAttachmentPoint)
	}
	if total > maxDenyRulesPerAttachmentPoint {
		return status.Errorf(codes.InvalidArgument,
			"iamtest: the deny policies of the attachment point of %s would hold %d deny rules: together they can contain up to %d", target, total, maxDenyRulesPerAttachmentPoint)
	}
	return nil
}

// ---- the service ----

// denyService serves google.iam.v2.Policies.
type denyService struct {
	iamv2pb.UnimplementedPoliciesServer
	s *Server
}

// lockDeny locks the deny store, first completing the operations due by
// now, and returns now and the unlock.
func (s *Server) lockDeny() (time.Time, func()) {
	now := s.now()
	s.deny.mu.Lock()
	s.completeDueLocked(now)
	return now, s.deny.mu.Unlock
}

// operationsService serves google.longrunning.Operations' GetOperation for
// the operations of denyService.
type operationsService struct {
	longrunningpb.UnimplementedOperationsServer
	s *Server
}

// ListPolicies lists the policies of an attachment point by name, 1000 a
// page ("IAM ignores this value and uses the value 1000", policy.proto),
// without their rules: the response holds "Metadata for the policies".
func (d *denyService) ListPolicies(_ context.Context, req *iamv2pb.ListPoliciesRequest) (*iamv2pb.ListPoliciesResponse, error) {
	s := d.s
	parent, err := s.denyParent(req.GetParent())
	if err != nil {
		return nil, err
	}
	_, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	var names []string
	for name := range ds.policies {
		if strings.HasPrefix(name, parent+"/") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	const pageSize = 1000
	from := 0
	if t := req.GetPageToken(); t != "" {
		from, err = strconv.Atoi(t)
		if err != nil || from < 0 || from > len(names) {
			return nil, status.Errorf(codes.InvalidArgument, "invalid page_token %q", t)
		}
	}
	to := min(from+pageSize, len(names))
	resp := &iamv2pb.ListPoliciesResponse{}
	if to < len(names) {
		resp.NextPageToken = strconv.Itoa(to)
	}
	for _, name := range names[from:to] {
		p := proto.Clone(ds.policies[name]).(*iamv2pb.Policy)
		p.Rules = nil
		resp.Policies = append(resp.Policies, p)
	}
	return resp, nil
}

// GetPolicy answers a policy, NOT_FOUND when there is none.
func (d *denyService) GetPolicy(_ context.Context, req *iamv2pb.GetPolicyRequest) (*iamv2pb.Policy, error) {
	s := d.s
	canon, err := s.denyPolicyName(req.GetName())
	if err != nil {
		return nil, err
	}
	_, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	p, ok := ds.policies[canon]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "policy %s not found", req.GetName())
	}
	return proto.Clone(p).(*iamv2pb.Policy), nil
}

// CreatePolicy validates the policy and starts its creation.
func (d *denyService) CreatePolicy(_ context.Context, req *iamv2pb.CreatePolicyRequest) (*longrunningpb.Operation, error) {
	s := d.s
	parent, err := s.denyParent(req.GetParent())
	if err != nil {
		return nil, err
	}
	if !validDenyPolicyID(req.GetPolicyId()) {
		return nil, status.Errorf(codes.InvalidArgument,
			"invalid policy_id %q: the ID must contain 3 to 63 characters: lowercase letters, numbers, dashes (-) and periods (.), the first a lowercase letter", req.GetPolicyId())
	}
	if req.GetPolicy() == nil {
		return nil, status.Error(codes.InvalidArgument, "policy is required")
	}
	if err := validateDenyPolicy(req.GetPolicy()); err != nil {
		return nil, err
	}
	if err := s.checkDenyEmailCase(req.GetPolicy()); err != nil {
		return nil, err
	}
	target := parent + "/" + req.GetPolicyId()
	now, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	if _, ok := ds.policies[target]; ok || ds.pendingCreateLocked(target) {
		return nil, status.Errorf(codes.AlreadyExists, "policy %s already exists", target)
	}
	if err := ds.limitsLocked(target, len(req.GetPolicy().GetRules())); err != nil {
		return nil, err
	}
	return s.startOpLocked(MethodCreatePolicy, target, proto.Clone(req.GetPolicy()).(*iamv2pb.Policy), "", now), nil
}

func (ds *denyState) pendingCreateLocked(target string) bool {
	return slices.ContainsFunc(ds.pending, func(op *denyOp) bool { return op.method == MethodCreatePolicy && op.target == target })
}

// UpdatePolicy validates the policy, checks its etag (unless
// SetDenyStaleEtagInOperation) and starts the update of its rules and
// display name ("You can update only the rules and the display name for the
// policy"; other fields are left as they are). An empty etag updates
// whatever the current one is.
func (d *denyService) UpdatePolicy(_ context.Context, req *iamv2pb.UpdatePolicyRequest) (*longrunningpb.Operation, error) {
	s := d.s
	if req.GetPolicy() == nil {
		return nil, status.Error(codes.InvalidArgument, "policy is required")
	}
	canon, err := s.denyPolicyName(req.GetPolicy().GetName())
	if err != nil {
		return nil, err
	}
	if err := validateDenyPolicy(req.GetPolicy()); err != nil {
		return nil, err
	}
	if err := s.checkDenyEmailCase(req.GetPolicy()); err != nil {
		return nil, err
	}
	return s.guardedWrite(MethodUpdatePolicy, canon, req.GetPolicy().GetName(), req.GetPolicy().GetEtag(), proto.Clone(req.GetPolicy()).(*iamv2pb.Policy))
}

// DeletePolicy checks the etag, if one is given (unless
// SetDenyStaleEtagInOperation), and starts the deletion; without an etag
// "the policy is deleted regardless of its current etag" (policy.proto).
// The operation's response is the deleted policy, with its delete_time.
func (d *denyService) DeletePolicy(_ context.Context, req *iamv2pb.DeletePolicyRequest) (*longrunningpb.Operation, error) {
	s := d.s
	canon, err := s.denyPolicyName(req.GetName())
	if err != nil {
		return nil, err
	}
	return s.guardedWrite(MethodDeletePolicy, canon, req.GetName(), req.GetEtag(), nil)
}

// guardedWrite is the part of UpdatePolicy and DeletePolicy made at the
// call: the policy must exist and, unless the stale etag is to show in the
// operation, carry the etag given.
func (s *Server) guardedWrite(method Method, canon, name, etag string, p *iamv2pb.Policy) (*longrunningpb.Operation, error) {
	now, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	cur, ok := ds.policies[canon]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "policy %s not found", name)
	}
	if etag != "" && etag != cur.GetEtag() && !ds.staleInOp {
		return nil, status.Error(s.staleEtagCode(), concurrentChangeMessage)
	}
	if method == MethodUpdatePolicy {
		if err := ds.limitsLocked(canon, len(p.GetRules())); err != nil {
			return nil, err
		}
	}
	return s.startOpLocked(method, canon, p, etag, now), nil
}

// GetOperation answers an operation of this fake by name, done once its
// time has come on the fake's clock; NOT_FOUND for any other name. The
// policy part of the name may name a registered project by ID or number.
func (o *operationsService) GetOperation(_ context.Context, req *longrunningpb.GetOperationRequest) (*longrunningpb.Operation, error) {
	s := o.s
	name := req.GetName()
	alt := name
	if i := strings.LastIndex(name, "/operations/"); i > 0 {
		if canon, err := s.denyPolicyName(name[:i]); err == nil {
			alt = canon + name[i:]
		}
	}
	_, unlock := s.lockDeny()
	defer unlock()
	ds := s.deny
	op, ok := ds.ops[name]
	if !ok {
		op, ok = ds.ops[alt]
	}
	if !ok {
		return nil, status.Errorf(codes.NotFound, "operation %q not found", name)
	}
	return op.answer(), nil
}

// SeedDenyPolicy stores a copy of p as the deny policy name
// (policies/{attachment_point}/denypolicies/{policy_id}, the attachment
// point URL-encoded: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/my-policy)
// as if CreatePolicy had made it long ago: no fault applies, no call is
// logged, and it is visible at once. p is checked as CreatePolicy checks it
// (principals and permissions in IAM v2's forms, the lengths and limits of
// https://cloud.google.com/iam/docs/deny-overview); it gets a fresh etag,
// uid and timestamps. It returns a copy of what was stored. A nil p deletes
// the policy. It panics on a name or policy CreatePolicy would refuse,
// saying what is wrong.
func (s *Server) SeedDenyPolicy(name string, p *iamv2pb.Policy) *iamv2pb.Policy {
	stored, err := s.seedDenyPolicy(name, p)
	if err != nil {
		panic("iamtest: SeedDenyPolicy: " + err.Error())
	}
	return stored
}

// denyOpOf returns the operation a deny write (method) answered, nil for
// any other call.
func (s *Server) denyOpOf(method Method, resp any) *denyOp {
	lro, ok := resp.(*longrunningpb.Operation)
	if !ok || method != MethodCreatePolicy && method != MethodUpdatePolicy && method != MethodDeletePolicy {
		return nil
	}
	ds := s.deny
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.ops[lro.GetName()]
}

// resolveDenyApplied sets the Applied of each deny write in calls from its
// operation: true only once the operation completed without error (the
// operations due by now are completed first).
func (s *Server) resolveDenyApplied(calls []Call) {
	if !slices.ContainsFunc(calls, func(c Call) bool { return c.op != nil }) {
		return
	}
	_, unlock := s.lockDeny()
	defer unlock()
	for i := range calls {
		if op := calls[i].op; op != nil {
			calls[i].Applied = calls[i].Applied && op.done != nil && op.done.GetError() == nil
			calls[i].op = nil
		}
	}
}
