package iamtest

import (
	"context"
	"encoding/asn1"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/vclock"
)

// clients is a started fake with the real GAPIC clients on it, their own
// retries off, and a manual clock.
type clients struct {
	srv      *Server
	clock    *vclock.Clock
	admin    *admin.IamClient
	policy   *iamapi.IamPolicyClient
	projects *resourcemanager.ProjectsClient
}

func newClients(t *testing.T, opts ...Option) *clients {
	t.Helper()
	ctx := context.Background()
	clock := newManualClock()
	srv := startTest(t, append([]Option{WithClock(testClock{now: clock.Now})}, opts...)...)
	ac, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	ac.CallOptions = &admin.IamCallOptions{}
	pc, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	pc.CallOptions = &iamapi.IamPolicyCallOptions{}
	rc, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	rc.CallOptions = &resourcemanager.ProjectsCallOptions{}
	t.Cleanup(func() { ac.Close(); pc.Close(); rc.Close() })
	return &clients{srv: srv, clock: clock, admin: ac, policy: pc, projects: rc}
}

func (c *clients) createSA(t *testing.T, project, id string) *adminpb.ServiceAccount {
	t.Helper()
	sa, err := c.admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{Name: "projects/" + project, AccountId: id})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

func (c *clients) set(resource string, p *iampb.Policy) (*iampb.Policy, error) {
	return c.policy.SetIamPolicy(context.Background(), &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
}

func (c *clients) get(resource string, version int32) (*iampb.Policy, error) {
	return c.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: resource,
		Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: version}})
}

// errorInfo returns the reason of err's ErrorInfo detail, "" when none.
func errorInfo(err error) string {
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei.GetReason()
		}
	}
	return ""
}

func TestHiddenAccountAnswersPropagationCodes(t *testing.T) {
	t.Parallel()
	c := newClients(t, withPropagationReads(3), withPropagationCodes(codes.NotFound, codes.PermissionDenied))
	ctx := context.Background()
	sa := c.createSA(t, "p", "new-robot")
	get := func() error {
		_, err := c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
		return err
	}
	wantCode(t, get(), codes.NotFound, "Service account "+sa.Name+" does not exist.")
	for range 2 {
		err := get()
		wantCode(t, err, codes.PermissionDenied,
			"Permission iam.serviceAccounts.get is required to perform this operation on service account "+sa.Name+".")
		if errorInfo(err) != ReasonPermissionDenied {
			t.Fatalf("no IAM_PERMISSION_DENIED ErrorInfo in %v", err)
		}
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	// The account's own policy answers NOT_FOUND while hidden, whatever the codes.
	other := c.createSA(t, "p", "other-robot")
	_, err := c.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: other.Name})
	wantCode(t, err, codes.NotFound, "")
	defer func() {
		if recover() == nil {
			t.Fatal("SetPropagationCodes(INTERNAL) did not panic")
		}
	}()
	c.srv.SetPropagationCodes(codes.Internal)
}

func TestGrantToHiddenAccountIsInvalidArgument(t *testing.T) {
	t.Parallel()
	c := newClients(t, withPropagationDelay(10*time.Second))
	ctx := context.Background()
	sa := c.createSA(t, "p", "new-robot")
	grant := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "serviceAccount:"+sa.Email)}}
	_, err := c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: grant})
	wantCode(t, err, codes.InvalidArgument, "Service account "+sa.Email+" does not exist.")
	if len(c.srv.Policy("projects/p").Bindings) != 0 {
		t.Fatal("a refused grant was stored")
	}
	c.clock.Advance(10 * time.Second)
	if _, err := c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: grant}); err != nil {
		t.Fatal(err)
	}
}

func TestRefuseUnknownServiceAccounts(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	grant := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "serviceAccount:ghost@p.iam.gserviceaccount.com")}}
	_, err := c.set("folders/2", grant)
	wantCode(t, err, codes.InvalidArgument, "Service account ghost@p.iam.gserviceaccount.com does not exist.")
	c.srv.SetRefuseUnknownServiceAccounts(false)
	if _, err := c.set("folders/1", grant); err != nil {
		t.Fatalf("turned off: %v", err)
	}
	c.srv.SetRefuseUnknownServiceAccounts(true)
	// Members already granted are not checked again.
	p, _ := c.get("folders/1", 3)
	p.Bindings = append(p.Bindings, binding("roles/editor", "user:a@example.com"))
	if _, err := c.set("folders/1", p); err != nil {
		t.Fatal(err)
	}
}

func TestStaleReadsAnswerPreviousPolicy(t *testing.T) {
	t.Parallel()
	c := newClients(t, withStaleReads(5*time.Second))
	first, err := c.set("folders/s", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.set("folders/s", &iampb.Policy{Etag: first.Etag, Bindings: []*iampb.Binding{binding("roles/viewer", "user:b@example.com")}})
	if err != nil {
		t.Fatal(err)
	}
	read, _ := c.get("folders/s", 3)
	if string(read.Etag) != string(first.Etag) || read.Bindings[0].Members[0] != "user:a@example.com" {
		t.Fatalf("read within the window = %v, want the first write", read)
	}
	_, err = c.set("folders/s", read)
	wantCode(t, err, codes.Aborted, concurrentChangeMessage)
	c.clock.Advance(5 * time.Second)
	read, _ = c.get("folders/s", 3)
	if string(read.Etag) != string(second.Etag) {
		t.Fatalf("read after the window = %v, want the second write", read)
	}
}

func TestWriteBelowStoredVersionRefused(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	v3, err := c.set("folders/v", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{condBinding("roles/browser", "user:a@example.com")}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.set("folders/v", &iampb.Policy{Version: 1, Etag: v3.Etag, Bindings: []*iampb.Binding{binding("roles/browser", "user:a@example.com")}})
	wantCode(t, err, codes.InvalidArgument,
		"Specified policy version (1) cannot be less than the existing policy version (3). For more information, please refer to https://cloud.google.com/iam/docs/policies#versions")
	if got := c.srv.Policy("folders/v"); got.Version != 3 || got.Bindings[0].Condition == nil {
		t.Fatalf("the refused write dropped the condition: %v", got)
	}
	// Without an etag IAM does not check the version: a blind overwrite.
	if _, err := c.set("folders/v", &iampb.Policy{Version: 1, Bindings: []*iampb.Binding{binding("roles/browser", "user:a@example.com")}}); err != nil {
		t.Fatal(err)
	}
}

func TestConditionalReadBelowVersion3(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	if _, err := c.set("folders/c", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{
		condBinding("roles/browser", "user:a@example.com"), binding("roles/editor", "user:b@example.com")}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.get("folders/c", 1)
	wantCode(t, err, codes.InvalidArgument,
		"Requested policy version (1) cannot be less than the existing policy version (3). For more information, please refer to https://cloud.google.com/iam/docs/policies#versions")
	c.srv.SetConditionalRead(SuffixConditionalRoles)
	p, err := c.get("folders/c", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 1 || !strings.HasPrefix(p.Bindings[0].Role, "roles/browser_withcond_") || p.Bindings[0].Condition != nil ||
		p.Bindings[1].Role != "roles/editor" {
		t.Fatalf("v1 read = %v", p)
	}
	_, err = c.set("folders/c", p)
	wantCode(t, err, codes.InvalidArgument, "")
}

func TestMemberCaseFolded(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	c.srv.SeedServiceAccount("p", "robot-1")
	got, err := c.set("folders/m", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer",
		"user:Alice@Example.COM", "user:alice@example.com", "group:Ops@Example.com", "domain:Example.com",
		"serviceAccount:Robot-1@P.iam.gserviceaccount.com",
		"principal://iam.googleapis.com/locations/global/workforcePools/Pool/subject/Alice")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:alice@example.com", "group:ops@example.com", "domain:example.com",
		"serviceAccount:robot-1@p.iam.gserviceaccount.com",
		"principal://iam.googleapis.com/locations/global/workforcePools/Pool/subject/Alice"}
	if !slices.Equal(got.Bindings[0].Members, want) {
		t.Fatalf("members %v, want %v", got.Bindings[0].Members, want)
	}
}

func TestWorkloadIdentityAndDeletedPrincipalAccepted(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	members := []string{"serviceAccount:my-proj.svc.id.goog[default/my-ksa]",
		"deleted:principal://iam.googleapis.com/locations/global/workforcePools/pool/subject/bob"}
	got, err := c.set("folders/w", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/iam.workloadIdentityUser", members...)}})
	if err != nil || !slices.Equal(got.Bindings[0].Members, members) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"serviceAccount:my-proj.svc.id.goog[default]", "serviceAccount:my-proj.svc.id.goog[ns/ksa"} {
		_, err := c.set("folders/w", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", bad)}})
		wantCode(t, err, codes.InvalidArgument, "")
	}
}

func TestUnknownProjectPermissionDenied(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	if _, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/anything"}); err != nil {
		t.Fatalf("registry off by default: %v", err)
	}
	c.srv.RegisterProject("my-project", 123)
	_, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/other-project"})
	wantCode(t, err, codes.PermissionDenied,
		"Permission 'resourcemanager.projects.getIamPolicy' denied on resource '//cloudresourcemanager.googleapis.com/projects/other-project' (or it may not exist).")
	if errorInfo(err) != ReasonPermissionDenied {
		t.Fatalf("no IAM_PERMISSION_DENIED ErrorInfo in %v", err)
	}
	_, err = c.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/other-project", AccountId: "robot-x"})
	wantCode(t, err, codes.PermissionDenied, "")
	// projects/NUMBER and projects/ID are one resource.
	w, err := c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/123", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	if err != nil || string(r.Etag) != string(w.Etag) {
		t.Fatalf("projects/my-project = %v, %v; written through projects/123: %v", r, err, w)
	}
}

func TestWildcardUnknownAccountPermissionDenied(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	_, err := c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/fake@example.com"})
	wantCode(t, err, codes.PermissionDenied, "")
	_, err = c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/fake@example.com"})
	wantCode(t, err, codes.NotFound, "")
}

func TestUserManagedKeyLimit(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	sa := c.createSA(t, "p", "key-robot")
	for i := range maxUserManagedKeys {
		if _, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}); err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
	}
	_, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name})
	wantCode(t, err, codes.FailedPrecondition, "Precondition check failed.")
}

func TestKeyCreationDisabledByOrgPolicy(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	sa := c.createSA(t, "p", "key-robot")
	c.srv.SetKeyCreationDisabled(true)
	_, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name})
	wantCode(t, err, codes.FailedPrecondition, "Key creation is not allowed on this service account.")
	var constraint string
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			constraint = pf.GetViolations()[0].GetType()
		}
	}
	if constraint != "constraints/iam.disableServiceAccountKeyCreation" {
		t.Fatalf("violation %q", constraint)
	}
	c.srv.SetKeyCreationDisabled(false)
	if _, err := c.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}); err != nil {
		t.Fatal(err)
	}
}

func TestPKCS12KeyIsPKCS12(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	sa := c.createSA(t, "p", "key-robot")
	key, err := c.admin.CreateServiceAccountKey(context.Background(), &adminpb.CreateServiceAccountKeyRequest{
		Name: sa.Name, PrivateKeyType: adminpb.ServiceAccountPrivateKeyType_TYPE_PKCS12_FILE})
	if err != nil {
		t.Fatal(err)
	}
	var pfx struct {
		Version  int
		AuthSafe struct {
			ContentType asn1.ObjectIdentifier
			Content     asn1.RawValue `asn1:"explicit,tag:0"`
		}
	}
	if rest, err := asn1.Unmarshal(key.PrivateKeyData, &pfx); err != nil || len(rest) != 0 || pfx.Version != 3 ||
		!pfx.AuthSafe.ContentType.Equal(asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}) {
		t.Fatalf("not a PKCS#12 PFX: %v, %+v", err, pfx)
	}
	if key.PrivateKeyType != adminpb.ServiceAccountPrivateKeyType_TYPE_PKCS12_FILE {
		t.Fatalf("type %v", key.PrivateKeyType)
	}
}

func TestInjectedErrorsShapedLikeIAM(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	c.srv.FailNextWith(MethodGetIamPolicy, 1, QuotaExceededError())
	_, err := c.get("folders/e", 3)
	wantCode(t, err, codes.ResourceExhausted, quotaMessage)
	if errorInfo(err) != ReasonRateLimitExceeded {
		t.Fatalf("quota error without RATE_LIMIT_EXCEEDED: %v", err)
	}
	c.srv.FailNextWith(MethodGetServiceAccount, 1, PermissionDeniedError("iam.serviceAccounts.get", "projects/p/serviceAccounts/x@p.iam.gserviceaccount.com"))
	_, err = c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/x@p.iam.gserviceaccount.com"})
	wantCode(t, err, codes.PermissionDenied, "")
	if errorInfo(err) != ReasonPermissionDenied {
		t.Fatalf("permission error without IAM_PERMISSION_DENIED: %v", err)
	}
	// A code alone gets IAM's details too, and IAM's message on request.
	c.srv.FailNext(MethodGetIamPolicy, 1, codes.ResourceExhausted)
	_, err = c.get("folders/e", 3)
	if errorInfo(err) != ReasonRateLimitExceeded || !strings.HasPrefix(status.Convert(err).Message(), injectedPrefix) {
		t.Fatalf("code-only quota error: %v", err)
	}
	c.srv.SetIAMMessages(true)
	c.srv.FailNext(MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = c.get("folders/e", 3)
	wantCode(t, err, codes.Unavailable, "The service is currently unavailable.")
	if calls := c.srv.Calls(); !calls[len(calls)-1].Injected {
		t.Fatal("the call log does not mark the injected error")
	}
}

func TestProjectRefusesAllUsers(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	for _, m := range []string{"allUsers", "allAuthenticatedUsers"} {
		_, err := c.projects.SetIamPolicy(context.Background(), &iampb.SetIamPolicyRequest{Resource: "projects/p",
			Policy: &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", m)}}})
		wantCode(t, err, codes.InvalidArgument, "Request contains an invalid argument.")
		if !strings.Contains(fmt.Sprint(status.Convert(err).Details()), m) {
			t.Fatalf("details do not name %s: %v", m, status.Convert(err).Details())
		}
	}
	// Other resources accept them.
	if _, err := c.set("folders/pub", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "allUsers")}}); err != nil {
		t.Fatal(err)
	}
}

func TestProjectOwnerNeedsInvitation(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	c.srv.SeedServiceAccount("p", "sa-robot")
	owner := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/owner", "user:bob@example.com", "serviceAccount:sa-robot@p.iam.gserviceaccount.com")}}
	_, err := c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: owner})
	wantCode(t, err, codes.InvalidArgument, "Request contains an invalid argument.")
	c.srv.InviteOwner("p", "user:Bob@example.com")
	if _, err := c.projects.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: owner}); err != nil {
		t.Fatal(err)
	}
}

func TestKnownRolesOnly(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	p := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/pubsub.publisher", "user:a@example.com")}}
	if _, err := c.set("folders/r", p); err != nil {
		t.Fatalf("off by default: %v", err)
	}
	c.srv.SetKnownRolesOnly(true)
	_, err := c.set("folders/r", p)
	wantCode(t, err, codes.InvalidArgument, "Role roles/pubsub.publisher is not supported for this resource.")
	c.srv.AddRoles("roles/pubsub.publisher")
	if _, err := c.set("folders/r", p); err != nil {
		t.Fatal(err)
	}
}

func TestRoleNamesIAMRefuses(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	for _, r := range []string{"roles/Viewer", "roles/.viewer", "roles/viewer_x", "projects/p/roles/bad-id", "roles/iam..x"} {
		_, err := c.set("folders/n", &iampb.Policy{Bindings: []*iampb.Binding{binding(r, "user:a@example.com")}})
		wantCode(t, err, codes.InvalidArgument, "")
		if !strings.Contains(status.Convert(err).Message(), fmt.Sprintf("%q", r)) {
			t.Fatalf("message does not name %q: %v", r, err)
		}
	}
	for _, r := range []string{"roles/compute.instanceAdmin.v1", "roles/composer.ServiceAgentV2Ext", "projects/p/roles/my_Role.v2"} {
		if _, err := c.set("folders/n", &iampb.Policy{Bindings: []*iampb.Binding{binding(r, "user:a@example.com")}}); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
	}
}

func TestPolicyLimits(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	many := func(n int, kind string) []string {
		m := make([]string, n)
		for i := range m {
			m[i] = fmt.Sprintf("%s:m%d@example.com", kind, i)
		}
		return m
	}
	_, err := c.set("folders/l", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/browser", many(1503, "user")...)}})
	wantCode(t, err, codes.InvalidArgument, "The number of members in the policy (1,503) is larger than the maximum allowed size 1,500.")
	if _, err := c.set("folders/l", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/browser", many(maxGroups, "group")...)}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.set("folders/l", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/browser", many(maxGroups+1, "group")...)}})
	wantCode(t, err, codes.InvalidArgument, "The number of groups in the policy (251) is larger than the maximum allowed size 250.")

	conds := func(n int) []*iampb.Binding {
		var bs []*iampb.Binding
		for i := range n {
			bs = append(bs, &iampb.Binding{Role: "roles/browser", Members: []string{"user:a@example.com"},
				Condition: &expr.Expr{Title: fmt.Sprint("c", i), Expression: fmt.Sprintf("request.time < timestamp(\"20%02d-01-01T00:00:00Z\")", 30+i)}})
		}
		return bs
	}
	if _, err := c.set("folders/l", &iampb.Policy{Version: 3, Bindings: conds(maxConditionalBindingsPerRoleAndPrincipal)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.set("folders/l", &iampb.Policy{Version: 3, Bindings: conds(maxConditionalBindingsPerRoleAndPrincipal + 1)})
	wantCode(t, err, codes.InvalidArgument,
		"The principal user:a@example.com is in 21 conditional bindings of role roles/browser, more than the maximum of 20.")
}

func TestEmptyPolicyVersionZero(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	p, err := c.get("folders/never", 3)
	if err != nil || p.Version != 0 || string(p.Etag) != string(emptyPolicyEtag) || len(p.Bindings) != 0 {
		t.Fatalf("empty policy = %v, %v", p, err)
	}
}

func TestDeletedAccountMembers(t *testing.T) {
	t.Parallel()
	c := newClients(t)
	ctx := context.Background()
	sa := c.createSA(t, "p", "doomed-robot")
	before, err := c.set("folders/d", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "serviceAccount:"+sa.Email, "user:a@example.com")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name}); err != nil {
		t.Fatal(err)
	}
	after, _ := c.get("folders/d", 3)
	want := []string{"deleted:serviceAccount:" + sa.Email + "?uid=" + sa.UniqueId, "user:a@example.com"}
	if !slices.Equal(after.Bindings[0].Members, want) || string(after.Etag) == string(before.Etag) {
		t.Fatalf("after delete %v, want members %v and a new etag", after, want)
	}
}

func TestShuffledBindings(t *testing.T) {
	t.Parallel()
	order := func(seed int64) []string {
		c := newClients(t, WithSeed(seed))
		var bs []*iampb.Binding
		for _, r := range []string{"roles/viewer", "roles/editor", "roles/browser", "roles/iam.serviceAccountUser", "roles/pubsub.publisher", "roles/pubsub.subscriber"} {
			bs = append(bs, binding(r, "user:a@example.com"))
		}
		if _, err := c.set("folders/o", &iampb.Policy{Bindings: bs}); err != nil {
			t.Fatal(err)
		}
		stored, _ := c.get("folders/o", 3)
		c.srv.SetShuffleBindings(true)
		var out []string
		for range 3 {
			p, _ := c.get("folders/o", 3)
			for _, b := range p.Bindings {
				out = append(out, b.Role)
			}
		}
		if out[0] == stored.Bindings[0].Role && slices.Equal(out[:6], out[6:12]) && slices.Equal(out[6:12], out[12:]) {
			t.Fatalf("three reads in stored order %v", out)
		}
		return out
	}
	if a, b := order(7), order(7); !slices.Equal(a, b) {
		t.Fatalf("the same seed gave %v and %v", a, b)
	}
}
