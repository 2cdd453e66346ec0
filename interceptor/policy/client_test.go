package policy_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapiv1 "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	gax "github.com/googleapis/gax-go/v2"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// The GAPIC clients with the IAM mixin fit Client as they are.
var (
	_ policy.Client = (*iamapiv1.IamPolicyClient)(nil)
	_ policy.Client = (*resourcemanager.ProjectsClient)(nil)
	_ policy.Client = (*resourcemanager.FoldersClient)(nil)
	_ policy.Client = (*resourcemanager.OrganizationsClient)(nil)
)

// TestIamPolicyClient: iam/apiv1's IamPolicyClient as it is, through a lost
// answer and a conflict.
func TestIamPolicyClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c, err := iamapiv1.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CallOptions = &iamapiv1.IamPolicyCallOptions{} // only the Updater retries
	u, _ := updater(t, c)
	srv.SeedServiceAccount("p1", "robot-1") // IAM refuses a grant to an account that does not exist
	srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	got, err := u.Update(ctx, "projects/p1/topics/t1", policy.AddBinding("roles/pubsub.publisher", "serviceAccount:Robot-1@p1.iam.gserviceaccount.com"))
	if err != nil {
		t.Fatal(err)
	}
	if m := members(got, ""); len(m) != 1 || m["serviceAccount:robot-1@p1.iam.gserviceaccount.com"] != 1 {
		t.Fatalf("got %v", got)
	}
	if n := srv.CountCalls(iamtest.MethodSetIamPolicy); n != 1 {
		t.Fatalf("%d writes", n)
	}
}

// TestProjectsClient: resourcemanager's ProjectsClient as it is, with a
// conditional binding beside an unconditional one.
func TestProjectsClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CallOptions = &resourcemanager.ProjectsCallOptions{}
	u, _ := updater(t, c)
	cond := &expr.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`}
	for range 2 { // the second time finds the work done
		if _, err := u.Update(ctx, "projects/p1",
			policy.AddBinding("roles/viewer", "group:ops@example.com"),
			policy.AddConditionalBinding("roles/browser", "user:temp@example.com", cond)); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Policy("projects/p1")
	if got.Version != 3 || len(got.Bindings) != 2 || srv.CountCalls(iamtest.MethodProjectsSetIamPolicy) != 1 {
		t.Fatalf("stored %v after %d writes", got, srv.CountCalls(iamtest.MethodProjectsSetIamPolicy))
	}
}

// TestFromAdmin: the admin client's hand-written policy methods, adapted:
// the requested version (a conditional policy can be read back), the etag
// (a conflict is detected), lost answers, and a refusal of what the admin
// methods cannot send (an update_mask with audit_configs).
func TestFromAdmin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CallOptions = &admin.IamCallOptions{}
	sa, err := c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "robot-one"})
	if err != nil {
		t.Fatal(err)
	}
	h := &hookClient{Client: policy.FromAdmin(c)}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 1 { // a concurrent writer
			srv.SeedPolicy(sa.Name, &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/iam.serviceAccountUser", Members: []string{"user:bob@example.com"}}}})
		}
		return nil
	}
	u, _ := updater(t, h)
	cond := &expr.Expr{Title: "weekdays", Expression: "request.time.getDayOfWeek() < 5"}
	srv.LoseNextAnswers(iamtest.MethodAdminSetIamPolicy, 1)
	if _, err := u.Update(ctx, sa.Name, policy.AddConditionalBinding("roles/iam.serviceAccountTokenCreator", "user:alice@example.com", cond)); err != nil {
		t.Fatal(err)
	}
	got, err := u.Update(ctx, "projects/-/serviceAccounts/"+sa.Email, policy.AddBinding("roles/iam.serviceAccountUser", "user:alice@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 || len(got.Bindings) != 2 || members(got, "")["user:bob@example.com"] != 1 {
		t.Fatalf("got %v", got)
	}
	// read, write (ABORTED), read, write (lost), read; read, write
	if g, s := srv.CountCalls(iamtest.MethodAdminGetIamPolicy), srv.CountCalls(iamtest.MethodAdminSetIamPolicy); g != 4 || s != 3 {
		t.Fatalf("%d reads, %d writes", g, s)
	}
	_, err = u.Update(ctx, sa.Name, func(p *iampb.Policy) (bool, error) {
		p.AuditConfigs = []*iampb.AuditConfig{{Service: "allServices"}}
		return true, nil
	})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "audit_configs") {
		t.Fatalf("audit configs through the admin client: %v", err)
	}
}

// TestFromConn: the raw google.iam.v1.IAMPolicy stub, with the routing
// header GAPIC clients send and gRPC call options passed through gax.
func TestFromConn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	var mu sync.Mutex
	var routing []string
	record := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		md, _ := metadata.FromOutgoingContext(ctx)
		mu.Lock()
		routing = append(routing, md.Get("x-goog-request-params")...)
		mu.Unlock()
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	conn, err := srv.Dial(ctx, record)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := policy.FromConn(conn)
	const folder = "folders/123"
	u, _ := updater(t, c)
	srv.FailNext(iamtest.MethodSetIamPolicy, 1, codes.Internal)
	if _, err := u.Update(ctx, folder, policy.AddBinding("roles/viewer", "domain:example.com")); err != nil {
		t.Fatal(err)
	}
	if m := members(srv.Policy(folder), ""); m["domain:example.com"] != 1 {
		t.Fatalf("stored %v", srv.Policy(folder))
	}
	mu.Lock()
	if len(routing) != 4 || routing[0] != "resource="+url.QueryEscape(folder) {
		t.Fatalf("routing headers %q", routing)
	}
	mu.Unlock()
	// gRPC options given through gax reach the call: a 1-byte receive limit
	// fails it.
	_, err = c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: folder}, gax.WithGRPCOptions(grpc.MaxCallRecvMsgSize(1)))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("the gRPC option was dropped: %v", err)
	}
}
