package iamtest_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log"
	"testing"
	"testing/synctest"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// A test starts a fake with NewServer, which stops it when the test ends, and
// hands its ClientOptions to the client the code under test uses.
func ExampleNewServer() {
	testCreateRobot := func(t *testing.T) {
		srv := iamtest.NewServer(t)
		client, err := admin.NewIamClient(t.Context(), srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		srv.FailNext(iamtest.MethodCreateServiceAccount, 1, codes.Internal)
		// ... call the code under test with client, check what it did ...
	}
	_ = testCreateRobot // func TestCreateRobot(t *testing.T) in a _test.go file
}

// New starts a fake outside a test function, for a TestMain that shares it,
// or for an example; Close stops it.
func ExampleNew() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	fmt.Println(sa.GetEmail(), err)
	// Output:
	// my-robot@my-project.iam.gserviceaccount.com <nil>
}

// Inside a testing/synctest bubble the wall clock is a fake one that jumps
// over every wait, so a test of fault handling does not wait real backoff:
// here the admin client's own retries (gax backoff on real timers) ride out
// five UNAVAILABLE answers in no real time.
func Example_synctest() {
	testRidesOutUnavailable := func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := iamtest.NewServer(t)
			client, err := admin.NewIamClient(t.Context(), srv.ClientOptions()...)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			sa, err := client.CreateServiceAccount(t.Context(), &adminpb.CreateServiceAccountRequest{
				Name: "projects/p", AccountId: "robot-one"})
			if err != nil {
				t.Fatal(err)
			}
			srv.FailNext(iamtest.MethodGetServiceAccount, 5, codes.Unavailable)
			if _, err := client.GetServiceAccount(t.Context(), &adminpb.GetServiceAccountRequest{Name: sa.Name}); err != nil {
				t.Fatal(err)
			}
			if n := srv.CountCalls(iamtest.MethodGetServiceAccount); n != 6 {
				t.Fatalf("%d calls, want 6", n)
			}
		})
	}
	_ = testRidesOutUnavailable // func TestRidesOutUnavailable(t *testing.T) in a _test.go file
}

// The options of ClientOptions serve the admin, IamPolicy and resourcemanager
// clients as they are; one policy store is behind them all.
func ExampleServer_ClientOptions() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	policies, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer policies.Close()
	projects, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer projects.Close()

	p, _ := policies.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	p.Bindings = []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}
	if _, err := policies.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: p}); err != nil {
		log.Fatal(err)
	}
	got, err := projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range got.GetBindings() {
		fmt.Println(b.GetRole(), b.GetMembers())
	}
	// Output:
	// roles/viewer [user:alice@example.com]
}

// Conn serves generated stubs.
func ExampleServer_Conn() {
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	stub := iampb.NewIAMPolicyClient(srv.Conn())
	p, err := stub.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	if err != nil {
		log.Fatal(err)
	}
	// The etag as IAM's JSON shows it: an empty policy's is ACAB.
	fmt.Printf("version %d, %d bindings, etag %s\n",
		p.GetVersion(), len(p.GetBindings()), base64.StdEncoding.EncodeToString(p.GetEtag()))
	// Output:
	// version 0, 0 bindings, etag ACAB
}

// The next two GetServiceAccount calls fail UNAVAILABLE; the third succeeds.
func ExampleServer_FailNext() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	if err != nil {
		log.Fatal(err)
	}

	srv.FailNext(iamtest.MethodGetServiceAccount, 2, codes.Unavailable)
	for range 3 {
		// gax.WithRetry(nil): no retries by the client itself, so each answer shows.
		_, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name}, gax.WithRetry(nil))
		fmt.Println(status.Code(err))
	}
	// Output:
	// Unavailable
	// Unavailable
	// OK
}
