package iamtest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// wantStatus fails t unless err has code and, when msg is not empty, that
// message.
func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || msg != "" && st.Message() != msg {
		t.Fatalf("got %v, want %v %q", err, code, msg)
	}
}

// reasonOf returns the reason of err's google.rpc.ErrorInfo, "" when none.
func reasonOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.GetReason()
		}
	}
	return ""
}

// setPolicy writes p to resource through the IamPolicy client.
func (c clients) setPolicy(resource string, p *iampb.Policy) (*iampb.Policy, error) {
	return c.policy.SetIamPolicy(context.Background(), &iampb.SetIamPolicyRequest{Resource: resource, Policy: p}, noRetry)
}

// getPolicy reads resource's policy at version through the IamPolicy client.
func (c clients) getPolicy(resource string, version int32) (*iampb.Policy, error) {
	return c.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: resource,
		Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: version}}, noRetry)
}

// viewer is a policy granting roles/viewer to members.
func viewer(members ...string) *iampb.Policy {
	return &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: members}}}
}

func TestSetPropagationCodesAnswersHiddenReads(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetPropagationReads(3)
	srv.SetPropagationCodes(codes.NotFound, codes.PermissionDenied)
	sa := c.createAccount(t, "p", "new-robot")
	_, err := c.getAccount(sa.Email)
	wantStatus(t, err, codes.NotFound, "")
	for range 2 {
		_, err := c.getAccount(sa.Email)
		wantStatus(t, err, codes.PermissionDenied, "")
		if !strings.HasPrefix(status.Convert(err).Message(), "Permission iam.serviceAccounts.get is required") ||
			reasonOf(err) != iamtest.ReasonPermissionDenied {
			t.Fatalf("PERMISSION_DENIED unlike IAM's: %v, reason %q", err, reasonOf(err))
		}
	}
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatalf("after the hidden reads: %v", err)
	}

	// A grant naming a hidden account is INVALID_ARGUMENT, whatever the codes.
	srv.SetPropagationCodes() // back to NOT_FOUND alone
	hidden := c.createAccount(t, "p", "newer-robot")
	_, err = c.setPolicy("projects/p", viewer("serviceAccount:"+hidden.Email))
	wantStatus(t, err, codes.InvalidArgument, "Service account "+hidden.Email+" does not exist.")
	_, err = c.getAccount(hidden.Email)
	wantStatus(t, err, codes.NotFound, "")
}

func TestSetStaleReadsAnswerThePreviousPolicy(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	srv.SetStaleReads(5 * time.Second)
	first, err := c.setPolicy("folders/1", viewer("user:a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	second := viewer("user:b@example.com")
	second.Etag = first.Etag
	if second, err = c.setPolicy("folders/1", second); err != nil {
		t.Fatal(err)
	}
	read, err := c.getPolicy("folders/1", 3)
	if err != nil || string(read.Etag) != string(first.Etag) {
		t.Fatalf("read within the window = %v, %v; want the first write %v", read, err, first)
	}
	_, err = c.setPolicy("folders/1", read)
	wantStatus(t, err, codes.Aborted, "")
	clock.Advance(5 * time.Second)
	if read, err = c.getPolicy("folders/1", 3); err != nil || string(read.Etag) != string(second.Etag) {
		t.Fatalf("read after the window = %v, %v; want the second write %v", read, err, second)
	}
	srv.SetStaleReads(0)
}

func TestSetConditionalReadChoosesTheVersion1Answer(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SeedPolicy("folders/c", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{{
		Role: "roles/browser", Members: []string{"user:a@example.com"},
		Condition: &expr.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`},
	}}})
	_, err := c.getPolicy("folders/c", 1)
	wantStatus(t, err, codes.InvalidArgument,
		"Requested policy version (1) cannot be less than the existing policy version (3). For more information, please refer to https://cloud.google.com/iam/docs/policies#versions")

	srv.SetConditionalRead(iamtest.SuffixConditionalRoles)
	p, err := c.getPolicy("folders/c", 1)
	if err != nil || p.Version != 1 || !strings.HasPrefix(p.Bindings[0].Role, "roles/browser_withcond_") || p.Bindings[0].Condition != nil {
		t.Fatalf("suffixed read = %v, %v", p, err)
	}
	_, err = c.setPolicy("folders/c", p)
	wantStatus(t, err, codes.InvalidArgument, "")

	srv.SetConditionalRead(iamtest.RefuseConditionalRead)
	_, err = c.getPolicy("folders/c", 1)
	wantStatus(t, err, codes.InvalidArgument, "")
	if s := iamtest.SuffixConditionalRoles.String(); s != "SuffixConditionalRoles" {
		t.Fatalf("String() = %q", s)
	}
}

func TestSetRefuseUnknownServiceAccountsRefusesGrants(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ghost := "serviceAccount:ghost@p.iam.gserviceaccount.com"
	_, err := c.setPolicy("folders/2", viewer(ghost)) // on by default
	wantStatus(t, err, codes.InvalidArgument, "Service account ghost@p.iam.gserviceaccount.com does not exist.")
	sa := srv.SeedServiceAccount("p", "real-robot")
	if _, err := c.setPolicy("folders/2", viewer("serviceAccount:"+sa.Email)); err != nil {
		t.Fatalf("a seeded account was refused: %v", err)
	}
	srv.SetRefuseUnknownServiceAccounts(false)
	if _, err := c.setPolicy("folders/3", viewer(ghost)); err != nil {
		t.Fatalf("turned off: %v", err)
	}
}

func TestSetKeyCreationDisabledActsAsTheOrgPolicy(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := srv.SeedServiceAccount("p", "key-robot")
	create := func() error {
		_, err := c.admin.CreateServiceAccountKey(context.Background(), &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry)
		return err
	}
	srv.SetKeyCreationDisabled(true)
	err := create()
	wantStatus(t, err, codes.FailedPrecondition, "Key creation is not allowed on this service account.")
	var violation string
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			violation = pf.GetViolations()[0].GetType()
		}
	}
	if violation != "constraints/iam.disableServiceAccountKeyCreation" {
		t.Fatalf("violation %q", violation)
	}
	srv.SetKeyCreationDisabled(false)
	if err := create(); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ServiceAccountKeys(sa.Email)); n != 1 {
		t.Fatalf("%d keys, want 1", n)
	}
}

func TestSetIAMMessagesGivesInjectedErrorsIAMsMessage(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err := c.getPolicy("folders/1", 3)
	if status.Convert(err).Message() == "The service is currently unavailable." {
		t.Fatalf("IAM's message while off: %v", err)
	}
	srv.SetIAMMessages(true)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = c.getPolicy("folders/1", 3)
	wantStatus(t, err, codes.Unavailable, "The service is currently unavailable.")
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.PermissionDenied)
	_, err = c.getPolicy("folders/1", 3)
	if reasonOf(err) != iamtest.ReasonPermissionDenied {
		t.Fatalf("injected PERMISSION_DENIED without its reason: %v", err)
	}
}

func TestSetKnownRolesOnlyAndAddRoles(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/pubsub.publisher", Members: []string{"user:a@example.com"}}}}
	if _, err := c.setPolicy("folders/r", p); err != nil {
		t.Fatalf("off by default: %v", err)
	}
	srv.SetKnownRolesOnly(true)
	_, err := c.setPolicy("folders/r", p)
	wantStatus(t, err, codes.InvalidArgument, "Role roles/pubsub.publisher is not supported for this resource.")
	if _, err := c.setPolicy("folders/r", viewer("user:a@example.com")); err != nil {
		t.Fatalf("a predefined role the fake knows: %v", err)
	}
	srv.AddRoles("roles/pubsub.publisher", "projects/p/roles/myRole")
	if _, err := c.setPolicy("folders/r", p); err != nil {
		t.Fatalf("after AddRoles: %v", err)
	}
	srv.SetKnownRolesOnly(false)
}

func TestSetShuffleBindingsIsSeeded(t *testing.T) {
	t.Parallel()
	roles := []string{"roles/viewer", "roles/editor", "roles/browser", "roles/iam.serviceAccountUser", "roles/pubsub.publisher", "roles/pubsub.subscriber"}
	orders := func(seed int64) []string {
		srv := iamtest.NewServer(t)
		c := newClients(t, srv)
		p := &iampb.Policy{}
		for _, r := range roles {
			p.Bindings = append(p.Bindings, &iampb.Binding{Role: r, Members: []string{"user:a@example.com"}})
		}
		srv.SeedPolicy("folders/o", p)
		srv.SetShuffleBindings(true)
		srv.SeedShuffle(seed)
		var out []string
		for range 3 {
			got, err := c.getPolicy("folders/o", 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range got.Bindings {
				out = append(out, b.Role)
			}
		}
		srv.SetShuffleBindings(false)
		if got, _ := c.getPolicy("folders/o", 3); got.Bindings[0].Role != roles[0] || got.Bindings[5].Role != roles[5] {
			t.Fatalf("turned off, bindings still shuffled: %v", got.Bindings)
		}
		return out
	}
	a, b := orders(7), orders(7)
	if !slices.Equal(a, b) {
		t.Fatalf("the same seed gave %v and %v", a, b)
	}
	stored := slices.Concat(roles, roles, roles)
	if slices.Equal(a, stored) {
		t.Fatalf("three reads in stored order: %v", a)
	}
}

func TestRegisterProjectRefusesUnknownProjects(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	projects := newProjectsClient(t, srv)
	ctx := context.Background()
	if _, err := projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/anything"}, noRetry); err != nil {
		t.Fatalf("registry off by default: %v", err)
	}
	srv.RegisterProject("my-project", 123)
	_, err := projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/other-project"}, noRetry)
	wantStatus(t, err, codes.PermissionDenied,
		"Permission 'resourcemanager.projects.getIamPolicy' denied on resource '//cloudresourcemanager.googleapis.com/projects/other-project' (or it may not exist).")
	if reasonOf(err) != iamtest.ReasonPermissionDenied {
		t.Fatalf("no %s ErrorInfo: %v", iamtest.ReasonPermissionDenied, err)
	}
	_, err = c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/other-project", AccountId: "robot-x"}, noRetry)
	wantStatus(t, err, codes.PermissionDenied, "")

	// projects/NUMBER and projects/ID name one policy.
	w, err := projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/123", Policy: viewer("user:a@example.com")}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	r, err := projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"}, noRetry)
	if err != nil || string(r.Etag) != string(w.Etag) {
		t.Fatalf("projects/my-project = %v, %v; written through projects/123: %v", r, err, w)
	}
}

func TestInviteOwnerAllowsAUserOwner(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	projects := newProjectsClient(t, srv)
	ctx := context.Background()
	owner := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/owner", Members: []string{"user:bob@example.com"}}}}
	_, err := projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: owner}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, "Request contains an invalid argument.")
	_, err = projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: viewer("allUsers")}, noRetry)
	wantStatus(t, err, codes.InvalidArgument, "Request contains an invalid argument.")
	srv.InviteOwner("p", "user:Bob@example.com")
	if _, err := projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: owner}, noRetry); err != nil {
		t.Fatalf("after InviteOwner: %v", err)
	}
}

// TestFidelityControlsRefuseBadInput checks that each control panics with a
// message naming iamtest, the control and the value.
func TestFidelityControlsRefuseBadInput(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	for _, tc := range []struct {
		call func()
		want string
	}{
		{func() { srv.SetPropagationCodes(codes.Internal) }, "iamtest: SetPropagationCodes: code Internal"},
		{func() { srv.SetStaleReads(-time.Second) }, "iamtest: SetStaleReads: duration -1s"},
		{func() { srv.SetConditionalRead(iamtest.ConditionalRead(7)) }, "iamtest: SetConditionalRead: ConditionalRead(7)"},
		{func() { srv.AddRoles("roles/Viewer") }, `iamtest: AddRoles: `},
		{func() { srv.AddRoles("roles/Viewer") }, `"roles/Viewer"`},
		{func() { srv.RegisterProject("P", 1) }, `iamtest: RegisterProject: invalid project ID "P"`},
		{func() { srv.RegisterProject("my-project", 0) }, "iamtest: RegisterProject: invalid project number 0"},
		{func() { srv.InviteOwner("p", "group:g@example.com") }, `iamtest: InviteOwner: member "group:g@example.com"`},
		{func() { srv.FailNextWith(iamtest.MethodGetRole, 1, nil) }, "iamtest: FailNextWith: err is nil"},
		{func() { srv.FailNextWith(iamtest.MethodGetRole, 1, status.Error(codes.Code(99), "x")) }, "iamtest: FailNextWith: code 99"},
		{func() { srv.FailNextWith(iamtest.MethodGetRole, 1, context.Canceled) }, `iamtest: FailNextWith: "context canceled" is not a gRPC status error`},
		{func() { srv.FailNextWith(iamtest.MethodGetRole, -1, iamtest.QuotaExceededError()) }, "iamtest: FailNextWith: count -1"},
		{func() { srv.FailNextWith("GetRole", 1, iamtest.QuotaExceededError()) }, `iamtest: FailNextWith: method "GetRole"`},
		{func() { iamtest.PermissionDeniedError("", "projects/p") }, `iamtest: PermissionDeniedError("", "projects/p")`},
		{func() { srv.SeedPolicy("", viewer("user:a@example.com")) }, "iamtest: SeedPolicy: the resource name must not be empty"},
		{func() { srv.SeedPolicy("folders/1", viewer("bob")) }, `iamtest: SeedPolicy: `},
		{func() { srv.SeedServiceAccount("p", "Bad") }, `iamtest: SeedServiceAccount: invalid account ID "Bad"`},
	} {
		msg := panicMessage(tc.call)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("panic %q does not say %q", msg, tc.want)
		}
	}
}

// TestFidelityControlsAreSafeForConcurrentUse changes the fidelity and data
// controls while calls run (run with -race).
func TestFidelityControlsAreSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			for range 20 {
				_ = c.grant("folders/1", "roles/viewer", "user:a@example.com")
				_, _ = c.getPolicy("folders/1", 1)
			}
		})
		wg.Go(func() {
			for j := range 20 {
				on := j%2 == 0
				srv.SetPropagationCodes(codes.PermissionDenied)
				srv.SetStaleReads(time.Duration(j) * time.Millisecond)
				srv.SetConditionalRead(iamtest.ConditionalRead(j % 2))
				srv.SetRefuseUnknownServiceAccounts(on)
				srv.SetKeyCreationDisabled(on)
				srv.SetIAMMessages(on)
				srv.SetKnownRolesOnly(false)
				srv.AddRoles("roles/pubsub.publisher")
				srv.SetShuffleBindings(on)
				srv.SeedShuffle(int64(j))
				srv.SeedPolicy(fmt.Sprintf("folders/%d", 100+i), viewer("user:b@example.com"))
				_ = srv.Policy("folders/1")
				srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, iamtest.QuotaExceededError())
				if j == 0 {
					srv.SeedServiceAccount("p", fmt.Sprintf("robot-%d", i))
				}
				_ = srv.ServiceAccount(fmt.Sprintf("robot-%d@p.iam.gserviceaccount.com", i))
			}
		})
	}
	wg.Wait()
	srv.SetStaleReads(0)
	srv.ResetFaults()
	if _, err := c.setPolicy("folders/2", viewer("user:c@example.com")); err != nil {
		t.Fatalf("after the changes: %v", err)
	}
}
