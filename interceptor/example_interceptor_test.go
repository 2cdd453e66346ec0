package interceptor_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// The interceptor in front of a server that fails twice. In a program, add
// it to a cloud.google.com/go client with
//
//	option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor()))
//
// Here a clock whose Sleep returns at once (exampleClock, in
// example_clock_test.go) and a fixed random fraction make the waits exact.
func ExampleRetrier_UnaryClientInterceptor() {
	r, err := interceptor.New(
		interceptor.WithDeadline(2*time.Minute),
		interceptor.WithClock(iamtest.NewVirtualClock(time.Now())),
		interceptor.WithRandom(func() float64 { return 0.25 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Reason == interceptor.Succeeded { // the final report of a call that was retried
				fmt.Printf("attempt %d: succeeded after %v\n", a.N, a.Elapsed)
				return
			}
			fmt.Printf("attempt %d: %v (%v), %s, wait %v\n", a.N, status.Code(a.Err), a.Class, a.Reason, a.Wait)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	flaky := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		calls++
		switch calls {
		case 1:
			return status.Error(grpccodes.Unavailable, "backend unavailable")
		case 2:
			return status.Error(grpccodes.Internal, "internal error")
		}
		return nil
	}
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, flaky)
	fmt.Println("calls:", calls, "err:", err)
	// Output:
	// attempt 1: Unavailable (Transient), retry, wait 1.25s
	// attempt 2: Internal (Transient), retry, wait 2.25s
	// attempt 3: succeeded after 3.5s
	// calls: 3 err: <nil>
}

// New refuses invalid options with an error that names them.
func ExampleNew() {
	_, err := interceptor.New(interceptor.WithDeadline(-time.Second), interceptor.WithMaxAttempts(-1))
	fmt.Println(err)
	// Output:
	// iamretry: WithDeadline(-1s): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)
	// iamretry: WithMaxAttempts(-1): the attempt count must be >= 0 (0: no cap; 1: no retries)
}
