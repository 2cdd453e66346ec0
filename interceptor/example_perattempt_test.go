package interceptor_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// CallPerAttemptTimeout cuts each attempt of one gRPC call: an attempt that
// hangs is abandoned after d and retried (the call is a read), while the
// Retrier's deadline governs the whole call. On a GAPIC client pass it as
// gax.WithGRPCOptions(interceptor.CallPerAttemptTimeout(d)). It has no
// context form.
func ExampleCallPerAttemptTimeout() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Println("attempt", a.N, status.Code(a.Err), a.Reason)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	hangOnce := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		calls++
		if calls == 1 {
			<-ctx.Done() // the server never answers this one
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	}
	err = r.UnaryClientInterceptor()(context.Background(), getServiceAccount, nil, nil, nil, hangOnce,
		interceptor.CallPerAttemptTimeout(20*time.Millisecond))
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1 DeadlineExceeded retry
	// attempt 2 OK succeeded
	// OK after 2 calls
}
