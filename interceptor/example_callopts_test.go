package interceptor_test

import (
	"context"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// CallDeadline gives one gRPC call its own retry deadline, through
// gax.WithGRPCOptions on a GAPIC client: during an outage this call keeps
// retrying for 5 minutes while the Retrier's other calls stop after 60 s.
func ExampleCallDeadline() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, err := interceptor.New(interceptor.WithClock(clock), interceptor.WithRandom(func() float64 { return 0.5 }))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sa := srv.SeedServiceAccount("p1", "robot-1")
	srv.SetOutage(iamtest.MethodGetServiceAccount, grpccodes.Unavailable)
	req := &adminpb.GetServiceAccountRequest{Name: sa.GetName()}
	for _, opts := range [][]gax.CallOption{nil, {gax.WithGRPCOptions(interceptor.CallDeadline(5 * time.Minute))}} {
		srv.ResetCalls()
		_, err := client.GetServiceAccount(ctx, req, opts...)
		fmt.Println(status.Code(err), "after", srv.CountCalls(iamtest.MethodGetServiceAccount), "attempts")
	}
	// Output:
	// Unavailable after 6 attempts
	// Unavailable after 14 attempts
}

// CallMaxAttempts caps one gRPC call's attempts (the first included); a
// negative value fails the call at once, before anything is sent.
func ExampleCallMaxAttempts() {
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
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sa := srv.SeedServiceAccount("p1", "robot-1")
	srv.SetOutage(iamtest.MethodGetServiceAccount, grpccodes.Unavailable)
	req := &adminpb.GetServiceAccountRequest{Name: sa.GetName()}
	for _, n := range []int{2, -1} {
		srv.ResetCalls()
		_, err := client.GetServiceAccount(ctx, req, gax.WithGRPCOptions(interceptor.CallMaxAttempts(n)))
		fmt.Println(n, status.Code(err), "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))
	}
	// Output:
	// 2 Unavailable server calls: 2
	// -1 InvalidArgument server calls: 0
}
