package interceptor_test

import (
	"context"
	"fmt"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// Retry at one layer: the admin client retries GetServiceAccount itself
// through gax; DisableGAXRetries leaves the retrying to the interceptor, so
// the server sees exactly the attempts the interceptor decides. (The fake
// IAM server of iamtest stands in for IAM; a real client drops its
// ClientOptions.)
func ExampleDisableGAXRetries() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.SetOutage(iamtest.MethodGetServiceAccount, grpccodes.Unavailable)

	r, err := interceptor.New(interceptor.WithMaxAttempts(3), interceptor.WithClock(&exampleClock{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	c, err := admin.NewIamClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
		fmt.Println(err)
		return
	}

	_, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a@p.iam.gserviceaccount.com"})
	fmt.Println(status.Code(err), "after", srv.CountCalls(iamtest.MethodGetServiceAccount), "attempts")
	// Output:
	// Unavailable after 3 attempts
}
