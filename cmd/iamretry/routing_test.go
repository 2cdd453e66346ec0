package main

import (
	"context"
	"net"
	"net/url"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// TestPolicyClientSendsRoutingHeader: the policy command's gRPC client
// calls the route's service with the routing header (x-goog-request-params)
// that GAPIC clients send, which Google's front ends route by. The CLI's
// own client (serviceClient) sent none; policy.FromService does.
func TestPolicyClientSendsRoutingHeader(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct{ method, routing string }
	calls := make(chan seen, 1)
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		md, _ := metadata.FromIncomingContext(stream.Context())
		s := seen{method: method}
		if v := md.Get("x-goog-request-params"); len(v) > 0 {
			s.routing = v[0]
		}
		calls <- s
		return status.Error(codes.PermissionDenied, "recorded")
	}))
	go srv.Serve(lis)
	defer srv.Stop()

	const resource = "projects/p/locations/l/services/s"
	f := &policyFlags{resource: "//run.googleapis.com/" + resource, endpoint: lis.Addr().String(), insecure: true, transport: transportGRPC}
	if err := f.validate(policySubcommands()["get"]); err != nil {
		t.Fatal(err)
	}
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	client, closeClient, err := policyClient(context.Background(), f, r)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	if _, err := client.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: f.name}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("GetIamPolicy: %v", err)
	}
	got := <-calls
	if got.method != "/google.cloud.run.v2.Services/GetIamPolicy" || got.routing != "resource="+url.QueryEscape(resource) {
		t.Errorf("the server saw %s with routing header %q", got.method, got.routing)
	}
}
