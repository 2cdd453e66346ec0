package iamtest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// Each GetIamPolicy fails with probability 0.5, with UNAVAILABLE or INTERNAL.
// The draws are seeded (1 unless WithSeed or SetSeed say otherwise), so the
// same calls give the same faults on every run.
func ExampleServer_SetFailureRate() {
	ctx := context.Background()
	srv, err := iamtest.New(iamtest.WithSeed(3))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.5, codes.Unavailable, codes.Internal)
	for range 8 {
		_, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
		fmt.Print(status.Code(err), " ")
	}
	fmt.Println()
	// Output:
	// OK OK Unavailable Internal OK Internal Unavailable OK
}

// A lost answer: the write commits, then the client is told UNAVAILABLE.
// Code that replays the write blindly would apply it twice.
func ExampleServer_LoseNextAnswers() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}}
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: p})
	fmt.Println("write:", status.Code(err))
	got, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	fmt.Println("read:", status.Code(err), got.GetBindings()[0].GetMembers())
	// Output:
	// write: Unavailable
	// read: OK [user:alice@example.com]
}

// At rate 1 for AnyMethod every write loses its answer and every read keeps
// it: lost-answer settings for AnyMethod apply to methods that write.
func ExampleServer_SetLostAnswerRate() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetLostAnswerRate(iamtest.AnyMethod, 1)
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}}
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: p})
	fmt.Println("write:", status.Code(err))
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	fmt.Println("read:", status.Code(err))
	// Output:
	// write: Unavailable
	// read: OK
}

// An outage of one method, then of all, until each is cleared.
func ExampleServer_SetOutage() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	read := func() codes.Code {
		_, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
		return status.Code(err)
	}
	test := func() codes.Code {
		_, err := client.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{
			Resource: "projects/my-project", Permissions: []string{"resourcemanager.projects.get"}})
		return status.Code(err)
	}

	srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	fmt.Println("GetIamPolicy down:", read(), test())
	srv.SetOutage(iamtest.AnyMethod, codes.Internal)
	fmt.Println("all down:", read(), test())
	srv.ClearOutage(iamtest.AnyMethod)
	srv.ClearOutage(iamtest.MethodGetIamPolicy)
	fmt.Println("cleared:", read(), test())
	// Output:
	// GetIamPolicy down: Unavailable OK
	// all down: Unavailable Internal
	// cleared: OK OK
}

// Latency runs on the fake's clock: with a clock of the test's own (WithClock)
// a slow backend costs no real time.
func ExampleServer_SetLatency() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetLatency(iamtest.MethodGetIamPolicy, 3*time.Second)
	for range 2 {
		if _, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(clock.Now().Format(time.TimeOnly))
	// Output:
	// 12:00:06
}

// Injected errors carry RetryInfo, the detail with which Google APIs say how
// long to wait before a retry.
func ExampleServer_SetRetryInfo() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetRetryInfo(5 * time.Second)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			fmt.Println(status.Code(err), "retry after", ri.GetRetryDelay().AsDuration())
		}
	}
	// Output:
	// Unavailable retry after 5s
}

// A new service account is not found by its first two reads, as IAM's
// eventually consistent reads may answer.
func ExampleServer_SetPropagationReads() {
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

	srv.SetPropagationReads(2)
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		_, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name}, gax.WithRetry(nil))
		fmt.Println(status.Code(err))
	}
	// Output:
	// NotFound
	// NotFound
	// OK
}

// A new service account is invisible for a minute on the fake's clock.
func ExampleServer_SetPropagationDelay() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetPropagationDelay(time.Minute)
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	if err != nil {
		log.Fatal(err)
	}
	for _, wait := range []time.Duration{0, 59 * time.Second, time.Second} {
		clock.Advance(wait)
		_, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name}, gax.WithRetry(nil))
		fmt.Println(clock.Now().Format(time.TimeOnly), status.Code(err))
	}
	// Output:
	// 12:00:00 NotFound
	// 12:00:59 NotFound
	// 12:01:00 OK
}

// Another writer slips in between a read and the write that carries the
// read's etag: IAM refuses the stale etag with ABORTED, and a rerun of the
// whole read-modify-write succeeds.
func ExampleServer_ConcurrentWriteNext() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	readModifyWrite := func() error {
		p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
		if err != nil {
			return err
		}
		p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:alice@example.com"}})
		_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: p})
		return err
	}

	srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 1)
	fmt.Println(status.Code(readModifyWrite()))
	fmt.Println(status.Code(readModifyWrite()))
	// Output:
	// Aborted
	// OK
}

// Some services answer a stale etag FAILED_PRECONDITION rather than ABORTED.
func ExampleServer_SetStaleEtagCode() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetStaleEtagCode(codes.FailedPrecondition)
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project",
		Policy: &iampb.Policy{Etag: []byte("stale")}})
	fmt.Println(status.Code(err))
	// Output:
	// FailedPrecondition
}

// The call log: each call's method, resource and code, injected failures
// included.
func ExampleServer_Calls() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	for _, r := range []string{"projects/a", "projects/b", "folders/123"} {
		_, _ = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: r})
	}
	for _, c := range srv.Calls() {
		fmt.Println(c.Method, c.Resource, c.Code)
	}
	fmt.Println(srv.CountCalls(iamtest.MethodGetIamPolicy), "calls")
	// Output:
	// /google.iam.v1.IAMPolicy/GetIamPolicy projects/a Unavailable
	// /google.iam.v1.IAMPolicy/GetIamPolicy projects/b OK
	// /google.iam.v1.IAMPolicy/GetIamPolicy folders/123 OK
	// 3 calls
}

// ResetFaults ends every fault at once; the stored policies stay.
func ExampleServer_ResetFaults() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	srv.FailNext(iamtest.MethodGetIamPolicy, 3, codes.Internal)
	srv.ResetFaults()
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	fmt.Println(status.Code(err))
	// Output:
	// OK
}
