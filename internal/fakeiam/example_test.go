package fakeiam_test

import (
	"context"
	"fmt"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// A test points admin.IamClient at the fake, with its own interceptor as a
// dial option, and makes the fake fail the next two GetServiceAccount calls.
func Example() {
	ctx := context.Background()
	srv := fakeiam.New()
	defer srv.Close()

	// The interceptor under test; here, a naive one that retries UNAVAILABLE
	// three times and numbers its attempts.
	retry := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		var err error
		for n := 1; n <= 3; n++ {
			actx := metadata.AppendToOutgoingContext(ctx, "x-retry-attempt", fmt.Sprint(n))
			if err = invoker(actx, method, req, reply, cc, opts...); status.Code(err) != codes.Unavailable {
				return err
			}
		}
		return err
	}
	client, err := admin.NewIamClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(retry)))...)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	client.CallOptions = &admin.IamCallOptions{} // no GAPIC retries: only ours

	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	if err != nil {
		panic(err)
	}
	srv.ResetCalls()
	srv.FailNext(fakeiam.MethodGetServiceAccount, 2, codes.Unavailable)

	got, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{
		Name: "projects/-/serviceAccounts/" + sa.Email})
	fmt.Println(got.GetEmail(), err)
	for _, c := range srv.Calls() {
		fmt.Println(c.Attempt, c.Code, c.Injected)
	}
	// Output:
	// my-robot@my-project.iam.gserviceaccount.com <nil>
	// 1 Unavailable true
	// 2 Unavailable true
	// 3 OK false
}
