package iamtest_test

import (
	"context"
	"fmt"
	"net"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/iamretry/iamretry/iamtest"
)

// Serve serves the gRPC face on a listener of your own, for a client in
// another process (or language) that dials lis.Addr() without TLS. The
// in-process ClientOptions keep working beside it, on the same store and
// call log. Close stops it and Serve returns nil.
func ExampleServer_Serve() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	client, err := admin.NewIamClient(ctx,
		option.WithEndpoint(lis.Addr().String()),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	if err != nil {
		fmt.Println(err)
		return
	}
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "robot-1"})
	fmt.Println(sa.GetEmail(), err)
	fmt.Println("seen in-process:", srv.ServiceAccount(sa.GetName()).GetEmail())
	client.Close()
	srv.Close()
	fmt.Println("Serve returned:", <-served)
	// Output:
	// robot-1@my-project.iam.gserviceaccount.com <nil>
	// seen in-process: robot-1@my-project.iam.gserviceaccount.com
	// Serve returned: <nil>
}
