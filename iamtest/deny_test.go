package iamtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"google.golang.org/api/googleapi"
	iamv2d "google.golang.org/api/iam/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	expr_pb "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
)

// denyParent is the attachment point of the tests' deny policies, URL-encoded
// as google/iam/v2/policy.proto asks ("the forward-slash character, `/`,
// must be written as `%2F`").
const denyParent = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies"

// denyParentByNumber is denyParent as answers name it: by the project's
// number ("Responses always contain the numeric ID", policy.proto), which
// the fake derives from the ID of a project not registered
// (Server.ProjectNumber).
const denyParentByNumber = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F642627587659/denypolicies"

// denyRule denies perms to principal.
func denyRule(principal string, perms ...string) *iamv2pb.PolicyRule {
	return &iamv2pb.PolicyRule{Kind: &iamv2pb.PolicyRule_DenyRule{DenyRule: &iamv2pb.DenyRule{
		DeniedPrincipals: []string{principal}, DeniedPermissions: perms}}}
}

// denyFaces returns a PoliciesClient over gRPC and one over REST, both on
// srv, with the clients' own retries off (GetOperation's too: the tests pass
// noRetry to Wait), closed when the test ends.
func denyFaces(t *testing.T, srv *iamtest.Server) map[string]*iamv2.PoliciesClient {
	t.Helper()
	ctx := context.Background()
	g, err := iamv2.NewPoliciesClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := iamv2.NewPoliciesRESTClient(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	faces := map[string]*iamv2.PoliciesClient{"gRPC": g, "REST": r}
	for _, c := range faces {
		c.CallOptions = &iamv2.PoliciesCallOptions{}
		t.Cleanup(func() { _ = c.Close() })
	}
	return faces
}

// createDeny creates parent/id through c and waits for it.
func createDeny(t *testing.T, c *iamv2.PoliciesClient, id string, rules ...*iamv2pb.PolicyRule) *iamv2pb.Policy {
	t.Helper()
	ctx := context.Background()
	op, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: id,
		Policy: &iamv2pb.Policy{DisplayName: "guardrails", Rules: rules}})
	if err != nil {
		t.Fatalf("CreatePolicy: %v", err)
	}
	p, err := op.Wait(ctx, noRetry)
	if err != nil {
		t.Fatalf("CreatePolicy's operation: %v", err)
	}
	return p
}

// TestDenyPolicyLifecycle runs create, get, list, update and delete through
// the real iam/apiv2 client on both faces, with the etag rules of
// google/iam/v2/policy.proto: an update or a delete carrying a stale etag
// "fails with a `409` error code and `ABORTED` status"; a delete without one
// deletes "regardless of its current `etag`".
func TestDenyPolicyLifecycle(t *testing.T) {
	t.Parallel()
	for face := range map[string]bool{"gRPC": true, "REST": true} {
		t.Run(face, func(t *testing.T) {
			ctx := context.Background()
			srv := iamtest.NewServer(t)
			c := denyFaces(t, srv)[face]

			created := createDeny(t, c, "no-key-creation",
				denyRule("principalSet://goog/group/admins@example.com", "iam.googleapis.com/serviceAccountKeys.create"))
			name := denyParentByNumber + "/no-key-creation"
			if created.GetName() != name || created.GetKind() != "DenyPolicy" || created.GetEtag() == "" || created.GetUid() == "" || created.GetCreateTime() == nil {
				t.Fatalf("created %v: want name %s, kind DenyPolicy, an etag, a uid and a create_time", created, name)
			}
			got, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: name})
			if err != nil || !proto.Equal(got, created) {
				t.Fatalf("GetPolicy = %v, %v; want %v", got, err, created)
			}

			// List answers "Metadata for the policies": no rules.
			it := c.ListPolicies(ctx, &iamv2pb.ListPoliciesRequest{Parent: denyParent})
			listed, err := it.Next()
			if err != nil || listed.GetName() != name || len(listed.GetRules()) != 0 || listed.GetEtag() != created.GetEtag() {
				t.Fatalf("ListPolicies: %v, %v; want %s without rules", listed, err, name)
			}
			if _, err := it.Next(); !errors.Is(err, iterator.Done) {
				t.Fatalf("ListPolicies: a second policy or %v", err)
			}

			stale := proto.Clone(got).(*iamv2pb.Policy)
			got.Rules = append(got.Rules, denyRule("principal://goog/subject/bob@example.com", "iam.googleapis.com/roles.delete"))
			op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: got})
			if err != nil {
				t.Fatalf("UpdatePolicy: %v", err)
			}
			updated, err := op.Wait(ctx, noRetry)
			if err != nil || len(updated.GetRules()) != 2 || updated.GetEtag() == created.GetEtag() {
				t.Fatalf("UpdatePolicy's operation: %v, %v; want 2 rules and a new etag", updated, err)
			}

			stale.DisplayName = "overwritten"
			if _, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: stale}); status.Code(err) != codes.Aborted {
				t.Fatalf("UpdatePolicy with a stale etag: %v, want ABORTED", err)
			}
			if _, err := c.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: name, Etag: stale.GetEtag()}); status.Code(err) != codes.Aborted {
				t.Fatalf("DeletePolicy with a stale etag: %v, want ABORTED", err)
			}
			if p := srv.DenyPolicy(name); p.GetDisplayName() != "guardrails" || len(p.GetRules()) != 2 {
				t.Fatalf("after the refused writes: %v", p)
			}

			dop, err := c.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: name})
			if err != nil {
				t.Fatalf("DeletePolicy without an etag: %v", err)
			}
			deleted, err := dop.Wait(ctx, noRetry)
			if err != nil || deleted.GetDeleteTime() == nil || deleted.GetName() != name {
				t.Fatalf("DeletePolicy's operation: %v, %v; want the deleted policy with its delete_time", deleted, err)
			}
			if _, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: name}); status.Code(err) != codes.NotFound {
				t.Fatalf("GetPolicy after delete: %v, want NOT_FOUND", err)
			}

			for m, want := range map[iamtest.Method]int{
				iamtest.MethodCreatePolicy: 1, iamtest.MethodGetPolicy: 2, iamtest.MethodListPolicies: 1,
				iamtest.MethodUpdatePolicy: 2, iamtest.MethodDeletePolicy: 2, iamtest.MethodGetOperation: 0,
			} {
				if n := srv.CountCalls(m); n != want {
					t.Errorf("%d calls of %s logged, want %d", n, m, want)
				}
			}
			for _, call := range srv.Calls() {
				if call.Method == iamtest.MethodUpdatePolicy && call.Resource != name {
					t.Errorf("UpdatePolicy logged with resource %q, want %q", call.Resource, name)
				}
			}
		})
	}
}

// TestDenyOperationDelayVirtualClock: with SetDenyOperationDelay the
// operation answers not done and the change is not visible until the
// fake's clock reaches its time; a VirtualClock's Advance gets there in no
// real time, and op.Wait then returns at its first poll.
func TestDenyOperationDelayVirtualClock(t *testing.T) {
	t.Parallel()
	for face := range map[string]bool{"gRPC": true, "REST": true} {
		t.Run(face, func(t *testing.T) {
			ctx := context.Background()
			clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
			srv := iamtest.NewServer(t, iamtest.WithClock(clock))
			c := denyFaces(t, srv)[face]
			before := createDeny(t, c, "guard", denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete"))

			srv.SetDenyOperationDelay(30 * time.Second)
			next := proto.Clone(before).(*iamv2pb.Policy)
			next.DisplayName = "renamed"
			op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next})
			if err != nil {
				t.Fatal(err)
			}
			if op.Done() {
				t.Fatal("the operation is done at once, with a 30s delay")
			}
			if p, err := op.Poll(ctx, noRetry); p != nil || err != nil || op.Done() {
				t.Fatalf("Poll before the delay: %v, %v, done %v", p, err, op.Done())
			}
			if md, err := op.Metadata(); err != nil || md.GetCreateTime().AsTime() != clock.Now() {
				t.Fatalf("metadata %v, %v; want the create_time %v", md, err, clock.Now())
			}
			if p, _ := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: before.GetName()}); p.GetEtag() != before.GetEtag() {
				t.Fatal("the update is visible before its operation completed")
			}

			// A create's name is taken from its call, not from its completion.
			cop, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "pending",
				Policy: &iamv2pb.Policy{Rules: before.GetRules()}})
			if err != nil || cop.Done() {
				t.Fatalf("CreatePolicy with a delay: %v, done %v", err, cop != nil && cop.Done())
			}
			if _, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "pending",
				Policy: &iamv2pb.Policy{Rules: before.GetRules()}}); codeOf(err) != codes.AlreadyExists {
				t.Fatalf("a second CreatePolicy of a pending name: %v, want ALREADY_EXISTS", err)
			}

			clock.Advance(30 * time.Second)
			start := time.Now()
			after, err := op.Wait(ctx, noRetry)
			if err != nil || after.GetDisplayName() != "renamed" || after.GetEtag() == before.GetEtag() {
				t.Fatalf("Wait: %v, %v", after, err)
			}
			if !after.GetUpdateTime().AsTime().Equal(clock.Now()) {
				t.Errorf("update_time %v, want the completion time %v", after.GetUpdateTime().AsTime(), clock.Now())
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("Wait took %v of real time after the clock passed the operation's time", d)
			}
			if n := srv.CountCalls(iamtest.MethodGetOperation); n != 2 {
				t.Errorf("%d GetOperation calls, want 2 (the Poll and the Wait)", n)
			}
			if p, err := cop.Wait(ctx, noRetry); err != nil || p.GetName() != denyParentByNumber+"/pending" {
				t.Errorf("the pending create: %v, %v", p, err)
			}
		})
	}
}

// TestDenyOperationWaitSynctest lets op.Wait poll on its own real-time
// backoff (1s, 2s, 4s, ...) inside a synctest bubble, whose clock is the
// fake's too: the operation completes at 30s, and Wait returns at its first
// poll after that, in no real time.
func TestDenyOperationWaitSynctest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		// gRPC only: the REST face's listener would block the bubble on
		// real network I/O.
		c, err := iamv2.NewPoliciesClient(ctx, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.CallOptions = &iamv2.PoliciesCallOptions{}
		srv.SetDenyOperationDelay(30 * time.Second)
		start := time.Now()
		op, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "slow",
			Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{denyRule("principal://goog/subject/eve@example.com", "storage.googleapis.com/buckets.delete")}}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := op.Wait(ctx, noRetry)
		if err != nil || p.GetName() != denyParentByNumber+"/slow" {
			t.Fatalf("Wait: %v, %v", p, err)
		}
		if d := time.Since(start); d < 30*time.Second || d > 2*time.Minute {
			t.Fatalf("Wait returned after %v on the bubble's clock, want just past 30s", d)
		}
		if n := srv.CountCalls(iamtest.MethodGetOperation); n < 2 {
			t.Fatalf("%d polls", n)
		}
	})
}

// TestDenyStaleEtagSurfaces covers the two places a stale etag shows up:
// the operation of a write overtaken by another while it ran, and, with
// SetDenyStaleEtagInOperation, the operation instead of the call.
func TestDenyStaleEtagSurfaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := denyFaces(t, srv)["REST"]
	p := createDeny(t, c, "guard", denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete"))

	srv.SetDenyOperationDelay(10 * time.Second)
	var ops []*iamv2.UpdatePolicyOperation
	for _, dn := range []string{"first", "second"} {
		next := proto.Clone(p).(*iamv2pb.Policy)
		next.DisplayName = dn
		op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next})
		if err != nil {
			t.Fatalf("UpdatePolicy %s: %v (both carry the current etag)", dn, err)
		}
		ops = append(ops, op)
	}
	clock.Advance(10 * time.Second)
	if got, err := ops[0].Wait(ctx, noRetry); err != nil || got.GetDisplayName() != "first" {
		t.Fatalf("first: %v, %v", got, err)
	}
	if _, err := ops[1].Wait(ctx, noRetry); status.Code(err) != codes.Aborted || !ops[1].Done() {
		t.Fatalf("second, overtaken: %v, want its operation to fail ABORTED", err)
	}

	srv.SetDenyOperationDelay(0)
	srv.SetDenyStaleEtagInOperation(true)
	op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: p}) // p's etag is stale
	if err != nil {
		t.Fatalf("UpdatePolicy with a stale etag, answered in the operation: the call failed: %v", err)
	}
	if _, err := op.Wait(ctx, noRetry); status.Code(err) != codes.Aborted {
		t.Fatalf("the operation: %v, want ABORTED", err)
	}
	if got := srv.DenyPolicy(p.GetName()); got.GetDisplayName() != "first" {
		t.Fatalf("the refused update changed the policy: %v", got)
	}
}

// TestDenyFaults: the fault controls apply to the deny methods as to every
// other: a scripted failure changes nothing, a lost answer's change is
// made, a concurrent writer moves the etag before UpdatePolicy, latency and
// GetOperation's faults apply too.
func TestDenyFaults(t *testing.T) {
	t.Parallel()
	for face := range map[string]bool{"gRPC": true, "REST": true} {
		t.Run(face, func(t *testing.T) {
			ctx := context.Background()
			clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
			srv := iamtest.NewServer(t, iamtest.WithClock(clock))
			c := denyFaces(t, srv)[face]
			p := createDeny(t, c, "guard", denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete"))

			srv.FailNext(iamtest.MethodUpdatePolicy, 1, codes.Unavailable)
			next := proto.Clone(p).(*iamv2pb.Policy)
			next.DisplayName = "x"
			if _, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next}); status.Code(err) != codes.Unavailable {
				t.Fatalf("scripted failure: %v", err)
			}
			if srv.DenyPolicy(p.GetName()).GetEtag() != p.GetEtag() {
				t.Fatal("a failed call changed the policy")
			}

			srv.LoseNextAnswers(iamtest.MethodUpdatePolicy, 1)
			if _, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next}); status.Code(err) != codes.Unavailable {
				t.Fatalf("lost answer: %v", err)
			}
			now := srv.DenyPolicy(p.GetName())
			if now.GetDisplayName() != "x" || now.GetEtag() == p.GetEtag() {
				t.Fatalf("the lost answer's update was not made: %v", now)
			}
			// The replay of the lost write alone carries a stale etag.
			if _, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: next}); status.Code(err) != codes.Aborted {
				t.Fatalf("replay of the lost write: %v, want ABORTED", err)
			}

			// A lost CreatePolicy answer: the policy exists, and the
			// replay meets it.
			srv.LoseNextAnswers(iamtest.AnyMethod, 1)
			create := &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "lost",
				Policy: &iamv2pb.Policy{Rules: p.GetRules()}}
			if _, err := c.CreatePolicy(ctx, create); status.Code(err) != codes.Unavailable {
				t.Fatalf("lost CreatePolicy answer: %v", err)
			}
			if _, err := c.CreatePolicy(ctx, create); codeOf(err) != codes.AlreadyExists {
				t.Fatalf("CreatePolicy replayed after a lost answer: %v, want ALREADY_EXISTS", err)
			}

			srv.ConcurrentWriteNext(iamtest.MethodUpdatePolicy, 1)
			if _, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: now}); status.Code(err) != codes.Aborted {
				t.Fatalf("after a concurrent writer: %v, want ABORTED", err)
			}
			if srv.DenyPolicy(p.GetName()).GetEtag() == now.GetEtag() {
				t.Fatal("the concurrent writer did not move the etag")
			}

			srv.SetDenyOperationDelay(time.Second)
			op, err := c.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: p.GetName()})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second)
			srv.FailNext(iamtest.MethodGetOperation, 1, codes.Unavailable)
			if _, err := op.Wait(ctx, noRetry); status.Code(err) != codes.Unavailable {
				t.Fatalf("GetOperation's scripted failure: %v", err)
			}
			if _, err := op.Wait(ctx, noRetry); err != nil {
				t.Fatalf("Wait again: %v", err)
			}

			srv.SetLatency(iamtest.MethodGetPolicy, time.Minute)
			t0 := clock.Now()
			if _, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: p.GetName()}); status.Code(err) != codes.NotFound {
				t.Fatalf("GetPolicy of the deleted policy: %v", err)
			}
			if d := clock.Since(t0); d != time.Minute {
				t.Fatalf("latency %v on the virtual clock, want 1m", d)
			}
			var injected int
			for _, call := range srv.Calls() {
				if call.Injected {
					injected++
				}
			}
			if injected != 4 {
				t.Fatalf("%d injected answers logged, want 4", injected)
			}
		})
	}
}

// TestDenyValidation: the identifier forms of google/iam/v2/deny.proto are
// accepted, other values refused INVALID_ARGUMENT naming them, on both faces.
func TestDenyValidation(t *testing.T) {
	t.Parallel()
	good := []string{
		"principalSet://goog/public:all",
		"principal://goog/subject/alice@example.com",
		"deleted:principal://goog/subject/alice@example.com?uid=1234567890",
		"principalSet://goog/group/admins@example.com",
		"deleted:principalSet://goog/group/admins@example.com?uid=1234567890",
		"principal://iam.googleapis.com/projects/-/serviceAccounts/my-service-account@iam.gserviceaccount.com",
		"deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/my-service-account@iam.gserviceaccount.com?uid=1234567890",
		"principalSet://goog/cloudIdentityCustomerId/C01Abc35",
		"principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/my-subject",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/group/my-group",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/attribute.department/sales",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/*",
		"principal://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/my-pool/subject/my-subject",
		"principalSet://iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/my-pool/*",
		"principalSet://cloudresourcemanager.googleapis.com/projects/123/type/ServiceAccount",
		"deleted:principal://iam.googleapis.com/locations/global/workforcePools/my-pool-id/subject/my-subject-attribute-value",
	}
	srv := iamtest.NewServer(t)
	for face, c := range denyFaces(t, srv) {
		ctx := context.Background()
		var rules []*iamv2pb.PolicyRule
		for _, p := range good {
			rules = append(rules, denyRule(p, "iam.googleapis.com/roles.list"))
		}
		rules = append(rules, withCondition(denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list"),
			"resource.matchTag('12345678/env', 'prod') && !resource.hasTagKeyId('tagKeys/123')"))
		createDeny(t, c, "all-forms-"+strings.ToLower(face), rules...)

		for _, tc := range []struct {
			rule *iamv2pb.PolicyRule
			want string
		}{
			{denyRule("user:alice@example.com", "iam.googleapis.com/roles.list"), `"user:alice@example.com" (an allow-policy member`},
			{denyRule("principal://goog/subject/alice", "iam.googleapis.com/roles.list"), `"principal://goog/subject/alice"`},
			{denyRule("principal://goog/subject/alice@example.com", "iam.roles.list"), `"iam.roles.list": expected SERVICE_FQDN/RESOURCE.ACTION`},
			{denyRule("principal://goog/subject/alice@example.com"), "denied_permissions is empty"},
			{&iamv2pb.PolicyRule{Kind: &iamv2pb.PolicyRule_DenyRule{DenyRule: &iamv2pb.DenyRule{
				DeniedPrincipals: []string{"principalSet://goog/group/g@example.com"}, ExceptionPrincipals: []string{"principalSet://goog/public:all"},
				DeniedPermissions: []string{"iam.googleapis.com/roles.list"}}}}, "cannot be an exception"},
			{&iamv2pb.PolicyRule{Description: strings.Repeat("d", 257), Kind: &iamv2pb.PolicyRule_DenyRule{DenyRule: &iamv2pb.DenyRule{
				DeniedPrincipals: []string{"principalSet://goog/public:all"}, DeniedPermissions: []string{"iam.googleapis.com/roles.list"}}}}, "257 characters"},
			{&iamv2pb.PolicyRule{}, "deny_rule is not set"},
			{withCondition(denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list"), "request.time < timestamp('2030-01-01T00:00:00Z')"), "function timestamp is not supported"},
			{withCondition(denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list"), "true"), "must use the resource tag functions"},
		} {
			_, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "bad",
				Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{tc.rule}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: CreatePolicy(%v): %v; want INVALID_ARGUMENT naming %s", face, tc.rule, err, tc.want)
			}
		}
		for _, tc := range []struct{ parent, id, want string }{
			{denyParent, "Bad", `invalid policy_id "Bad"`},
			{denyParent, "ab", `invalid policy_id "ab"`},
			{"policies/cloudresourcemanager.googleapis.com%2Ffolders%2Fmy-folder/denypolicies", "ok-id", "use the numeric ID"},
			{"policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/allowpolicies", "ok-id", "must be denypolicies"},
			{"policies/storage.googleapis.com%2Fbuckets%2Fb/denypolicies", "ok-id", "attach to projects, folders and organizations"},
		} {
			_, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: tc.parent, PolicyId: tc.id,
				Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list")}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: CreatePolicy(%s, %s): %v; want INVALID_ARGUMENT naming %s", face, tc.parent, tc.id, err, tc.want)
			}
		}
	}
	if n := srv.CountCalls(iamtest.MethodCreatePolicy); n != 2*(1+9+5) {
		t.Errorf("%d CreatePolicy calls logged", n)
	}
}

// TestDenyLimits: "Each resource can have up to 500 deny policies.
// Together, these deny policies can contain a total of 500 deny rules."
// (https://cloud.google.com/iam/docs/deny-overview).
func TestDenyLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := denyFaces(t, srv)["gRPC"]
	rules := make([]*iamv2pb.PolicyRule, 499)
	for i := range rules {
		rules[i] = denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list")
	}
	srv.SeedDenyPolicy(denyParent+"/big", &iamv2pb.Policy{Rules: rules})
	createDeny(t, c, "one-more", rules[0])
	_, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: denyParent, PolicyId: "too-many",
		Policy: &iamv2pb.Policy{Rules: rules[:1]}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "501 deny rules") {
		t.Fatalf("the 501st rule: %v", err)
	}
	// Another attachment point has its own 500.
	other := "policies/cloudresourcemanager.googleapis.com%2Forganizations%2F123/denypolicies"
	if _, err := c.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{Parent: other, PolicyId: "fine",
		Policy: &iamv2pb.Policy{Rules: rules[:1]}}); err != nil {
		t.Fatalf("another attachment point: %v", err)
	}
}

// TestDenyProjectNumber: "For projects, requests can use the alphanumeric
// or the numeric ID. Responses always contain the numeric ID." With the
// project registered, both name one policy, answered by number; its
// operation may be polled by either.
func TestDenyProjectNumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	srv.RegisterProject("my-project", 4242)
	for face, c := range denyFaces(t, srv) {
		id := "by-number-" + strings.ToLower(face)
		p := createDeny(t, c, id, denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.list"))
		byNumber := "policies/cloudresourcemanager.googleapis.com%2Fprojects%2F4242/denypolicies/" + id
		if p.GetName() != byNumber {
			t.Fatalf("%s: created %s, want %s", face, p.GetName(), byNumber)
		}
		for _, n := range []string{denyParent + "/" + id, byNumber} {
			if got, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: n}); err != nil || got.GetName() != byNumber {
				t.Fatalf("%s: GetPolicy(%s): %v, %v", face, n, got, err)
			}
		}
		op, err := c.GetOperation(ctx, &longrunningpb.GetOperationRequest{Name: "policies/nope/denypolicies/x/operations/1"})
		if status.Code(err) != codes.NotFound && status.Code(err) != codes.InvalidArgument {
			t.Fatalf("%s: GetOperation of an unknown operation: %v, %v", face, op, err)
		}
	}
}

// TestDenyDiscoveryClient: the iam/v2 discovery client works as the GAPIC
// one does (both send the attachment point's %2F as %252F), and a request
// written by hand with %2F on the wire names the same policy: http.proto's
// rule for a variable of several segments (the server decodes every escape
// but %2F) gives both the same name.
func TestDenyDiscoveryClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	var paths []string
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		paths = append(paths, r.URL.EscapedPath())
		return srv.HTTPClient().Transport.RoundTrip(r)
	})}
	svc, err := iamv2d.NewService(ctx, append(srv.RESTClientOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		t.Fatal(err)
	}
	op, err := svc.Policies.CreatePolicy(denyParent, &iamv2d.GoogleIamV2Policy{Rules: []*iamv2d.GoogleIamV2PolicyRule{{
		DenyRule: &iamv2d.GoogleIamV2DenyRule{DeniedPrincipals: []string{"principalSet://goog/public:all"}, DeniedPermissions: []string{"iam.googleapis.com/roles.list"}}}}}).
		PolicyId("via-discovery").Context(ctx).Do()
	if err != nil || !op.Done {
		t.Fatalf("CreatePolicy: %v, %v", op, err)
	}
	name := denyParent + "/via-discovery"
	p, err := svc.Policies.Get(name).Context(ctx).Do()
	if err != nil || p.Name != denyParentByNumber+"/via-discovery" {
		t.Fatalf("Get: %v, %v", p, err)
	}
	polled, err := svc.Policies.Operations.Get(op.Name).Context(ctx).Do()
	if err != nil || !polled.Done || polled.Name != op.Name {
		t.Fatalf("Operations.Get(%s): %v, %v", op.Name, polled, err)
	}
	if got, err := denyFaces(t, srv)["REST"].GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: name}); err != nil || got.GetEtag() != p.Etag {
		t.Fatalf("the same policy through the GAPIC REST client: %v, %v", got, err)
	}
	if len(paths) == 0 || !strings.Contains(paths[0], "%252Fprojects%252Fmy-project/denypolicies") {
		t.Fatalf("the discovery client sent %q", paths)
	}
	resp, err := srv.HTTPClient().Get(srv.RESTEndpoint() + "v2/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw iamv2d.GoogleIamV2Policy
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode != 200 || raw.Etag != p.Etag {
		t.Fatalf("GET with %%2F on the wire: %d, %v, %v", resp.StatusCode, raw, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDenyConcurrentWriters: eight writers each add their own rule to one
// deny policy by read-modify-write (rerun from the read on ABORTED and on a
// lost answer, the rule's presence checked first), over both faces at once,
// with a slow operation, lost answers and random failures: every rule lands
// exactly once.
func TestDenyConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t, iamtest.WithSeed(7))
	faces := denyFaces(t, srv)
	p := createDeny(t, faces["gRPC"], "shared", denyRule("principalSet://goog/public:all", "iam.googleapis.com/roles.delete"))
	srv.SetLostAnswerRate(iamtest.MethodUpdatePolicy, 0.2)
	srv.SetFailureRate(iamtest.AnyMethod, 0.1, codes.Unavailable)

	const writers = 8
	errs := make(chan error, writers)
	for i := range writers {
		c := faces[[]string{"gRPC", "REST"}[i%2]]
		perm := "storage.googleapis.com/buckets.w" + string(rune('a'+i))
		go func() {
			errs <- func() error {
				for range 200 {
					cur, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: p.GetName()})
					if err != nil {
						continue
					}
					for _, r := range cur.GetRules() {
						if slices.Contains(r.GetDenyRule().GetDeniedPermissions(), perm) {
							return nil
						}
					}
					cur.Rules = append(cur.Rules, denyRule("principalSet://goog/public:all", perm))
					op, err := c.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: cur})
					if err != nil {
						continue
					}
					for range 50 {
						if _, err = op.Wait(ctx, noRetry); status.Code(err) != codes.Unavailable {
							break
						}
					}
				}
				return errors.New(perm + ": no success in 200 rounds")
			}()
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	final := srv.DenyPolicy(p.GetName())
	count := map[string]int{}
	for _, r := range final.GetRules() {
		for _, perm := range r.GetDenyRule().GetDeniedPermissions() {
			count[perm]++
		}
	}
	if len(final.GetRules()) != writers+1 {
		t.Fatalf("%d rules, want %d: %v", len(final.GetRules()), writers+1, count)
	}
	for perm, n := range count {
		if n != 1 {
			t.Errorf("%s is in %d rules", perm, n)
		}
	}
	t.Logf("UpdatePolicy calls: %d for %d writers", srv.CountCalls(iamtest.MethodUpdatePolicy), writers)
}

// codeOf is the code of err: over REST the google.rpc.Code name of the JSON
// body's error.status (HTTP 409 is both ABORTED and ALREADY_EXISTS, and the
// REST client's status maps it to ABORTED), else status.Code.
func codeOf(err error) codes.Code {
	var herr *googleapi.Error
	if errors.As(err, &herr) {
		var body struct {
			Error struct {
				Status string `json:"status"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(herr.Body), &body) == nil {
			for c := codes.OK; c <= codes.Unauthenticated; c++ {
				if strings.EqualFold(strings.ReplaceAll(body.Error.Status, "_", ""), c.String()) {
					return c
				}
			}
		}
	}
	return status.Code(err)
}

// withCondition sets r's denial condition to expr.
func withCondition(r *iamv2pb.PolicyRule, expr string) *iamv2pb.PolicyRule {
	r.GetDenyRule().DenialCondition = &expr_pb.Expr{Expression: expr}
	return r
}

// TestDenyControlsRefuseBadInput: the deny controls panic, naming what is
// wrong, on what they cannot honour; the fault controls accept the deny
// methods.
func TestDenyControlsRefuseBadInput(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { srv.SetDenyOperationDelay(-time.Second) }, "SetDenyOperationDelay: duration -1s is negative"},
		{func() { srv.SeedDenyPolicy("projects/p/denypolicies/x", &iamv2pb.Policy{}) }, `SeedDenyPolicy: rpc error: code = InvalidArgument desc = invalid policy name "projects/p/denypolicies/x"`},
		{func() {
			srv.SeedDenyPolicy(denyParent+"/x-1", &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{denyRule("user:a@example.com", "iam.googleapis.com/roles.list")}})
		}, `"user:a@example.com" (an allow-policy member`},
		{func() { srv.ConcurrentWriteNext(iamtest.MethodGetPolicy, 1) }, "is not a SetIamPolicy method, UpdateRole, UpdatePolicy or DeletePolicy"},
	} {
		if msg := panicMessage(tc.f); !strings.Contains(msg, tc.want) {
			t.Errorf("panic %q, want it to contain %q", msg, tc.want)
		}
	}
	for _, m := range []iamtest.Method{iamtest.MethodListPolicies, iamtest.MethodGetPolicy, iamtest.MethodCreatePolicy,
		iamtest.MethodUpdatePolicy, iamtest.MethodDeletePolicy, iamtest.MethodGetOperation} {
		if msg := panicMessage(func() {
			srv.FailNext(m, 1, codes.Internal)
			srv.SetLatency(m, time.Second)
			srv.SetOutage(m, codes.Unavailable)
		}); msg != "" {
			t.Errorf("%s refused: %s", m, msg)
		}
	}
	if srv.SeedDenyPolicy(denyParent+"/gone", nil) != nil || srv.DenyPolicy(denyParent+"/gone") != nil {
		t.Error("SeedDenyPolicy(nil) of a missing policy")
	}
}
