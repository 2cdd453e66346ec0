package interceptor_test

import (
	"context"
	"fmt"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/fakeiam"
	"github.com/iamretry/iamretry/internal/vclock"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Retry at one layer: the admin client retries GetServiceAccount itself
// through gax; DisableGAXRetries leaves the retrying to the interceptor, so
// the server sees exactly the attempts the interceptor decides. (The fake
// IAM server stands in for IAM; a real client drops its ClientOptions.)
func ExampleDisableGAXRetries() {
	srv := fakeiam.New()
	defer srv.Close()
	srv.SetFailureRate(fakeiam.MethodGetServiceAccount, 1, grpccodes.Unavailable)

	r, err := interceptor.New(interceptor.WithMaxAttempts(3), interceptor.WithClock(vclock.New()))
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
	fmt.Println(status.Code(err), "after", srv.CountCalls(fakeiam.MethodGetServiceAccount), "attempts")
	// Output:
	// Unavailable after 3 attempts
}
