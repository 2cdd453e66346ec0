package iamtest_test

import (
	"context"
	"fmt"
	"log"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// An error of the test's own, once, then the real answer.
func ExampleServer_FailNextWith() {
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

	srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, status.Error(codes.Unauthenticated, "token expired"))
	for range 2 {
		_, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
		fmt.Println(status.Code(err), status.Convert(err).Message())
	}
	// Output:
	// Unauthenticated token expired
	// OK
}

// A quota error as IAM sends it: code that tells a quota from other
// RESOURCE_EXHAUSTED errors by the ErrorInfo reason can be tested.
func ExampleQuotaExceededError() {
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

	srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, iamtest.QuotaExceededError())
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	fmt.Println(status.Code(err))
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			fmt.Println(ei.GetReason() == iamtest.ReasonRateLimitExceeded, ei.GetMetadata()["service"])
		}
	}
	// Output:
	// ResourceExhausted
	// true iam.googleapis.com
}

// A permission error as IAM sends it, with the permission it names.
func ExamplePermissionDeniedError() {
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

	sa := srv.SeedServiceAccount("my-project", "robot-one")
	srv.FailNextWith(iamtest.MethodGetServiceAccount, 1,
		iamtest.PermissionDeniedError("iam.serviceAccounts.get", sa.GetName()))
	_, err = client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println(status.Convert(err).Message())
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			fmt.Println(ei.GetReason(), ei.GetMetadata()["permission"])
		}
	}
	// Output:
	// Permission 'iam.serviceAccounts.get' denied on resource 'projects/my-project/serviceAccounts/robot-one@my-project.iam.gserviceaccount.com' (or it may not exist).
	// IAM_PERMISSION_DENIED iam.serviceAccounts.get
}
