package interceptor_test

import "google.golang.org/grpc"

type (
	grpcClientConn = grpc.ClientConn
	grpcCallOption = grpc.CallOption
)
