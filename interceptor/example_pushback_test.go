package interceptor_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// WithPushback honours the grpc-retry-pushback-ms trailer of gRFC A6: the
// server says how long to wait (here 5 s, instead of the backoff's 1 s), or,
// with a negative value, not to retry at all.
func ExampleWithPushback() {
	r, err := interceptor.New(
		interceptor.WithPushback(),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("attempt %d: %s, wait %v\n", a.N, a.Reason, a.Wait)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	trailers := []string{"5000", "-1"} // what the server answers, call after call
	calls := 0
	server := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		for _, o := range opts {
			if tr, ok := o.(grpc.TrailerCallOption); ok {
				*tr.TrailerAddr = metadata.Pairs(interceptor.PushbackTrailer, trailers[calls])
			}
		}
		calls++
		return status.Error(grpccodes.Unavailable, "overloaded")
	}
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, server)
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1: retry, wait 5s
	// attempt 2: server pushback, wait 0s
	// Unavailable after 2 calls
}
