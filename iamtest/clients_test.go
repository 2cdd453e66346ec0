package iamtest

import (
	"context"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestRealClients points the three GAPIC clients at the fake through
// ClientOptions, plus a caller's own interceptor, and calls through them.
func TestRealClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := newRaw(t)
	defer srv.Close()

	var seen []string
	tag := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		seen = append(seen, method)
		return invoker(metadata.AppendToOutgoingContext(ctx, attemptHeader, "1"), method, req, reply, cc, opts...)
	})
	withTag := append(srv.ClientOptions(), option.WithGRPCDialOption(tag))

	ac, err := admin.NewIamClient(ctx, withTag...)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	sa, err := ac.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "robot-one"})
	if err != nil {
		t.Fatal(err)
	}
	if sa.Email != "robot-one@p1.iam.gserviceaccount.com" || sa.Name != "projects/p1/serviceAccounts/robot-one@p1.iam.gserviceaccount.com" {
		t.Fatalf("created %v", sa)
	}
	pol, err := ac.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/-/serviceAccounts/" + sa.Email})
	if err != nil {
		t.Fatal(err)
	}
	pol.Add("user:alice@example.com", "roles/iam.serviceAccountUser")
	if _, err := ac.SetIamPolicy(ctx, &admin.SetIamPolicyRequest{Resource: sa.Name, Policy: pol}); err != nil {
		t.Fatal(err)
	}

	pc, err := iamapi.NewIamPolicyClient(ctx, withTag...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	got, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bindings) != 1 || got.Bindings[0].Members[0] != "user:alice@example.com" {
		t.Fatalf("IAMPolicy sees %v", got)
	}

	rc, err := resourcemanager.NewProjectsClient(ctx, withTag...)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p1", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"group:ops@example.com"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	pp, err := rc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pp.Bindings) != 1 {
		t.Fatalf("project policy %v", pp)
	}

	want := []Method{MethodCreateServiceAccount, MethodAdminGetIamPolicy, MethodAdminSetIamPolicy,
		MethodGetIamPolicy, MethodProjectsSetIamPolicy, MethodProjectsGetIamPolicy}
	if len(seen) != len(want) {
		t.Fatalf("interceptor saw %v, want %v", seen, want)
	}
	for i, c := range srv.Calls() {
		if c.Method != want[i] || c.Attempt != "1" || seen[i] != string(want[i]) {
			t.Fatalf("call %d: %+v (interceptor saw %s), want %s", i, c, seen[i], want[i])
		}
	}
}

// TestGAPICRetriesCanBeTurnedOff checks the advice in the package doc: the
// admin client retries UNAVAILABLE by itself unless its CallOptions are
// emptied, after which the fake sees exactly one call.
func TestGAPICRetriesCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := startTest(t)
	ac, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	ac.CallOptions = &admin.IamCallOptions{}
	srv.FailNext(MethodGetServiceAccount, 1, codes.Unavailable)
	_, err = ac.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "x@p.iam.gserviceaccount.com"})
	if status.Code(err) != codes.Unavailable || srv.CountCalls(AnyMethod) != 1 {
		t.Fatalf("err %v after %d calls", err, srv.CountCalls(AnyMethod))
	}
}
