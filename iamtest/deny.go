package iamtest

import (
	"time"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
)

// Methods of google.iam.v2.Policies, the deny policies of IAM v2
// (iam/apiv2's PoliciesClient, gRPC and REST), and the
// google.longrunning.Operations method their operations are polled with
// (PoliciesClient.GetOperation, and the Wait and Poll of the operations that
// CreatePolicy, UpdatePolicy and DeletePolicy return).
const (
	MethodListPolicies Method = "/google.iam.v2.Policies/ListPolicies"
	MethodGetPolicy    Method = "/google.iam.v2.Policies/GetPolicy"
	MethodCreatePolicy Method = "/google.iam.v2.Policies/CreatePolicy"
	MethodUpdatePolicy Method = "/google.iam.v2.Policies/UpdatePolicy"
	MethodDeletePolicy Method = "/google.iam.v2.Policies/DeletePolicy"
	MethodGetOperation Method = "/google.longrunning.Operations/GetOperation"
)

// denyMethods are the deny-policy methods the controls accept.
var denyMethods = []Method{
	MethodListPolicies, MethodGetPolicy, MethodCreatePolicy, MethodUpdatePolicy,
	MethodDeletePolicy, MethodGetOperation,
}

func init() {
	for _, m := range denyMethods {
		knownMethods[m] = true
	}
	// A concurrent writer can move the etag of a deny policy too.
	setIamPolicyMethods = append(setIamPolicyMethods, MethodUpdatePolicy, MethodDeletePolicy)
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
	s.fake.SetDenyOperationDelay(d)
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
func (s *Server) SetDenyStaleEtagInOperation(on bool) { s.fake.SetDenyStaleEtagInOperation(on) }

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
	stored, err := s.fake.SeedDenyPolicy(name, p)
	if err != nil {
		panic("iamtest: SeedDenyPolicy: " + err.Error())
	}
	return stored
}

// DenyPolicy returns a copy of the deny policy name as GetPolicy would
// answer it (operations due by now on the fake's clock completed first),
// without a fault or a logged call, or nil when there is none. A registered
// project (RegisterProject) may be named by ID or number; answers name it
// by number, as IAM's do.
func (s *Server) DenyPolicy(name string) *iamv2pb.Policy { return s.fake.DenyPolicy(name) }
