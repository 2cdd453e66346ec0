package iamtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
)

// TestDenySlashPrincipals: subject and attribute values may hold "/", as
// Workload Identity Federation's do for GitHub Actions (its subject
// repo:ORG/REPO:ref:refs/heads/BRANCH and its attribute.repository
// ORG/REPO: https://cloud.google.com/iam/docs/workload-identity-federation-with-deployment-pipelines;
// the forms: https://cloud.google.com/iam/docs/principal-identifiers). Both
// faces store them as written.
func TestDenySlashPrincipals(t *testing.T) {
	t.Parallel()
	principals := []string{
		"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/attribute.repository/my-org/my-repo",
		"principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/subject/repo:my-org/my-repo:ref:refs/heads/main",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat/attribute.team/eng/platform",
		"principal://iam.googleapis.com/locations/global/workforcePools/altostrat/subject/org/unit/raha",
	}
	srv := iamtest.NewServer(t)
	for face, c := range denyFaces(t, srv) {
		var rules []*iamv2pb.PolicyRule
		for _, p := range principals {
			r := denyRule(p, "iam.googleapis.com/roles.list")
			r.GetDenyRule().ExceptionPrincipals = []string{p}
			rules = append(rules, r)
		}
		got := createDeny(t, c, "slashes-"+strings.ToLower(face), rules...)
		for i, p := range principals {
			if d := got.GetRules()[i].GetDenyRule(); d.GetDeniedPrincipals()[0] != p || d.GetExceptionPrincipals()[0] != p {
				t.Errorf("%s: rule %d stored %v, want %s", face, i, d, p)
			}
		}
	}
}

// applied is how many logged calls to m were Applied.
func applied(srv *iamtest.Server, m iamtest.Method) int {
	n := 0
	for _, c := range srv.Calls() {
		if c.Method == m && c.Applied {
			n++
		}
	}
	return n
}

// TestDenyAppliedFollowsOperation: a deny write's change is made by its
// long-running operation (google/iam/v2/policy.proto: UpdatePolicy
// "Updates the specified policy" and returns a google.longrunning.Operation
// whose error is the write's), so Call.Applied is true only once the
// operation completed without error: not while it is pending, not when it
// failed (overtaken, or a stale etag answered in the operation).
func TestDenyAppliedFollowsOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, face := range []string{"gRPC", "REST"} {
		clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
		srv := iamtest.NewServer(t, iamtest.WithClock(clock))
		c := denyFaces(t, srv)[face]
		p := createDeny(t, c, "guard", denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete"))
		if n := applied(srv, iamtest.MethodCreatePolicy); n != 1 {
			t.Fatalf("%s: %d CreatePolicy calls applied, want 1", face, n)
		}

		srv.SetDenyOperationDelay(10 * time.Second)
		var ops []*iamv2.UpdatePolicyOperation
		for _, dn := range []string{"first", "second"} {
			next := proto.Clone(p).(*iamv2pb.Policy)
			next.DisplayName = dn
			op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next})
			if err != nil {
				t.Fatalf("%s: UpdatePolicy %s: %v", face, dn, err)
			}
			ops = append(ops, op)
		}
		if n := applied(srv, iamtest.MethodUpdatePolicy); n != 0 {
			t.Fatalf("%s: %d UpdatePolicy calls applied while their operations are pending, want 0", face, n)
		}
		clock.Advance(10 * time.Second)
		if _, err := ops[1].Wait(ctx, noRetry); status.Code(err) != codes.Aborted {
			t.Fatalf("%s: second, overtaken: %v, want ABORTED", face, err)
		}
		if n := applied(srv, iamtest.MethodUpdatePolicy); n != 1 {
			t.Fatalf("%s: %d UpdatePolicy calls applied for one change, want 1", face, n)
		}

		srv.SetDenyOperationDelay(0)
		srv.SetDenyStaleEtagInOperation(true)
		op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: p}) // p's etag is stale
		if err != nil {
			t.Fatalf("%s: UpdatePolicy with a stale etag: %v", face, err)
		}
		if _, err := op.Wait(ctx, noRetry); status.Code(err) != codes.Aborted {
			t.Fatalf("%s: the operation: %v, want ABORTED", face, err)
		}
		if n := applied(srv, iamtest.MethodUpdatePolicy); n != 1 {
			t.Fatalf("%s: %d UpdatePolicy calls applied, want 1 (the stale one failed in its operation)", face, n)
		}
		for _, call := range srv.Calls() {
			if call.Method == iamtest.MethodGetOperation && !call.Applied && call.Code == codes.OK {
				t.Fatalf("%s: a GetOperation answered OK is not Applied: %+v", face, call)
			}
		}
	}
}

// TestDenyProjectByNumber: "For projects, requests can use the alphanumeric
// or the numeric ID. Responses always contain the numeric ID."
// (google/iam/v2/policy.proto, Policy.name). A project not registered gets
// a number derived from its ID, the same on every server; every answer
// (the operation's policy, GetPolicy, ListPolicies, the deleted policy)
// names it so, and requests may use either form.
func TestDenyProjectByNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	num := srv.ProjectNumber("my-project")
	if other := iamtest.NewServer(t).ProjectNumber("my-project"); other != num || len(num) != 12 {
		t.Fatalf("ProjectNumber: %s and %s, want one 12-digit number", num, other)
	}
	if "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F"+num+"/denypolicies" != denyParentByNumber {
		t.Fatalf("my-project's number %s, want denyParentByNumber's", num)
	}
	for face, c := range denyFaces(t, srv) {
		id := "numbered-" + strings.ToLower(face)
		byNumber := denyParentByNumber + "/" + id
		if p := createDeny(t, c, id, denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list")); p.GetName() != byNumber {
			t.Fatalf("%s: created %s, want %s", face, p.GetName(), byNumber)
		}
		for _, n := range []string{denyParent + "/" + id, byNumber} {
			if got, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: n}); err != nil || got.GetName() != byNumber {
				t.Fatalf("%s: GetPolicy(%s): %v, %v", face, n, got, err)
			}
		}
		it := c.ListPolicies(ctx, &iamv2pb.ListPoliciesRequest{Parent: denyParent})
		for p, err := it.Next(); err != iterator.Done; p, err = it.Next() {
			if err != nil || !strings.HasPrefix(p.GetName(), denyParentByNumber+"/") {
				t.Fatalf("%s: ListPolicies: %v, %v", face, p, err)
			}
		}
		op, err := c.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: denyParent + "/" + id})
		if err != nil {
			t.Fatalf("%s: DeletePolicy: %v", face, err)
		}
		if gone, err := op.Wait(ctx, noRetry); err != nil || gone.GetName() != byNumber {
			t.Fatalf("%s: the deleted policy: %v, %v", face, gone, err)
		}
	}
	srv.RegisterProject("my-project", 4242)
	if n := srv.ProjectNumber("my-project"); n != "4242" {
		t.Fatalf("ProjectNumber of a registered project: %s, want 4242", n)
	}
}

// TestDenyPermissionGroups: the permission groups of
// https://cloud.google.com/iam/docs/deny-overview#permission-groups,
// SERVICE_FQDN/*.* and SERVICE_FQDN/RESOURCE.*, are accepted on both faces,
// denied and excepted; other wildcards are refused INVALID_ARGUMENT.
func TestDenyPermissionGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	for face, c := range denyFaces(t, srv) {
		r := denyRule("principalSet://goog/public:all", "iam.googleapis.com/*.*", "cloudresourcemanager.googleapis.com/projects.*")
		r.GetDenyRule().ExceptionPermissions = []string{"iam.googleapis.com/roles.*"}
		got := createDeny(t, c, "groups-"+strings.ToLower(face), r)
		if !proto.Equal(got.GetRules()[0], r) {
			t.Fatalf("%s: stored %v, want %v", face, got.GetRules()[0], r)
		}
		for _, bad := range []string{"iam.googleapis.com/*.delete", "iam.googleapis.com/*", "iam.googleapis.com/roles.del*", "*/*.*"} {
			_, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "bad",
				Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{denyRule("principalSet://goog/public:all", bad)}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "permission group") {
				t.Errorf("%s: %s: %v, want INVALID_ARGUMENT naming the permission groups", face, bad, err)
			}
		}
	}
}

// TestDenyEmailCase: IAM validates the email of a deny principal strictly
// and refuses it "if case does not match" the account's (the Terraform
// provider's deny-policy support,
// https://github.com/GoogleCloudPlatform/magic-modules/pull/5854). The
// account's case is lower case unless SetKnownPrincipals gave another; a
// service account's is always lower case. Workforce and workload subjects
// are attribute values, kept as written. IAM's words for the refusal are not
// public: the test checks the code and that the message names the case.
func TestDenyEmailCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	srv.SetKnownPrincipals("user:Jane.Doe@example.com", "group:admins@example.com")
	for face, c := range denyFaces(t, srv) {
		ok := []string{
			"principal://goog/subject/alice@example.com",
			"principal://goog/subject/Jane.Doe@example.com",
			"principalSet://goog/group/admins@example.com",
			"principal://iam.googleapis.com/projects/-/serviceAccounts/ci@my-project.iam.gserviceaccount.com",
			"deleted:principal://goog/subject/bob@example.com?uid=123",
			"principal://iam.googleapis.com/locations/global/workforcePools/altostrat/subject/Raha@Altostrat.com",
		}
		var rules []*iamv2pb.PolicyRule
		for _, p := range ok {
			rules = append(rules, denyRule(p, "iam.googleapis.com/roles.delete"))
		}
		id := "case-" + strings.ToLower(face)
		p := createDeny(t, c, id, rules...)
		for i, want := range ok {
			if got := p.GetRules()[i].GetDenyRule().GetDeniedPrincipals()[0]; got != want {
				t.Errorf("%s: stored %s, want %s as written", face, got, want)
			}
		}
		bad := []string{
			"principal://goog/subject/Alice@example.com",
			"principal://goog/subject/jane.doe@example.com",
			"principalSet://goog/group/Admins@Example.com",
			"principal://iam.googleapis.com/projects/-/serviceAccounts/CI@my-project.iam.gserviceaccount.com",
			"deleted:principal://goog/subject/Bob@example.com?uid=123",
			"deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/ci@My-Project.iam.gserviceaccount.com?uid=7",
		}
		for _, pr := range bad {
			_, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "bad",
				Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{denyRule(pr, "iam.googleapis.com/roles.delete")}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "case") {
				t.Errorf("%s: CreatePolicy denying %s: %v, want INVALID_ARGUMENT naming the case", face, pr, err)
			}
			r := denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete")
			r.GetDenyRule().ExceptionPrincipals = []string{pr}
			_, err = c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{
				Name: p.GetName(), Etag: p.GetEtag(), Rules: []*iamv2pb.PolicyRule{r}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "exception_principals") {
				t.Errorf("%s: UpdatePolicy excepting %s: %v, want INVALID_ARGUMENT naming exception_principals", face, pr, err)
			}
		}
	}
	if err := panicMessage(func() {
		srv.SeedDenyPolicy(denyParent+"/seeded", &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{
			denyRule("principal://goog/subject/Alice@example.com", "iam.googleapis.com/roles.delete")}})
	}); !strings.Contains(err, "case") {
		t.Errorf("SeedDenyPolicy of a mis-cased email: panic %q, want one naming the case", err)
	}
}
