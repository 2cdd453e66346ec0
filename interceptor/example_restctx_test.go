package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/googleapi"
	iamv1 "google.golang.org/api/iam/v1"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// DisableContext turns retries off for one call on every face: here the
// same context reaches a gRPC GAPIC client and a REST discovery client, both
// wired by the same Retrier, and each gets the server's first answer.
func ExampleDisableContext() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	grpcClient, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer grpcClient.Close()
	restClient, err := interceptor.NewRESTClient(ctx, r, iamv1.NewService, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("p1", "robot-1")
	once := interceptor.DisableContext(ctx)

	srv.FailNext(iamtest.MethodGetServiceAccount, 1, grpccodes.Unavailable)
	_, err = grpcClient.GetServiceAccount(once, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println("gRPC:", status.Code(err), "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))

	srv.ResetCalls()
	srv.FailNext(iamtest.MethodGetServiceAccount, 1, grpccodes.Unavailable)
	_, err = restClient.Projects.ServiceAccounts.Get(sa.GetName()).Context(once).Do()
	var gerr *googleapi.Error
	errors.As(err, &gerr)
	fmt.Println("REST:", gerr.Code, "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))
	// Output:
	// gRPC: Unavailable server calls: 1
	// REST: 503 server calls: 1
}

// RetryNotFoundContext retries 404 NOT_FOUND for one call: the read that
// follows a create, while the new account is not visible yet. Without it,
// NOT_FOUND is an answer and is returned at once.
func ExampleRetryNotFoundContext() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	svc, err := interceptor.NewRESTClient(ctx, r, iamv1.NewService, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("p1", "robot-1")
	for _, c := range []context.Context{ctx, interceptor.RetryNotFoundContext(ctx)} {
		srv.ResetCalls()
		srv.FailNext(iamtest.MethodGetServiceAccount, 2, grpccodes.NotFound)
		got, err := svc.Projects.ServiceAccounts.Get(sa.GetName()).Context(c).Do()
		if err != nil {
			var gerr *googleapi.Error
			errors.As(err, &gerr)
			fmt.Println(gerr.Code, "after", srv.CountCalls(iamtest.MethodGetServiceAccount), "call")
			srv.ResetFaults()
			continue
		}
		fmt.Println(got.Email, "after", srv.CountCalls(iamtest.MethodGetServiceAccount), "calls")
	}
	// Output:
	// 404 after 1 call
	// robot-1@p1.iam.gserviceaccount.com after 3 calls
}
