package interceptor_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// WithDeadline bounds how long retries go on, counted from the first
// failure: a wait that would end after it is never started, and the call
// ends at once with the server's last error. During a long outage, with a
// 10 s deadline: waits of 1 s, 2 s and 4 s (7 s in all), then the next wait,
// 8 s, would end past 10 s.
func ExampleWithDeadline() {
	clk := &exampleClock{}
	r, err := interceptor.New(
		interceptor.WithDeadline(10*time.Second),
		interceptor.WithClock(clk),
		interceptor.WithRandom(func() float64 { return 0 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("attempt %d: %s, wait %v\n", a.N, a.Reason, a.Wait)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable))
	fmt.Println(status.Code(err), "after", clk.Now().Sub(time.Time{}))
	// Output:
	// attempt 1: retry, wait 1s
	// attempt 2: retry, wait 2s
	// attempt 3: retry, wait 4s
	// attempt 4: retry deadline reached, wait 0s
	// Unavailable after 7s
}

// WithMaxAttempts caps the attempts of a call, the first one included.
func ExampleWithMaxAttempts() {
	r, err := interceptor.New(
		interceptor.WithMaxAttempts(3),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { fmt.Printf("attempt %d: %s\n", a.N, a.Reason) }),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil,
		failFirst(&calls, grpccodes.Internal, grpccodes.Internal, grpccodes.Internal, grpccodes.Internal))
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1: retry
	// attempt 2: retry
	// attempt 3: max attempts reached
	// Internal after 3 calls
}

// WithPerAttemptTimeout gives each attempt a deadline of its own, so a hung
// attempt is cut off and retried while the call's budget lasts. The first
// attempt here hangs until its context ends; the second answers.
func ExampleWithPerAttemptTimeout() {
	r, err := interceptor.New(
		interceptor.WithPerAttemptTimeout(20*time.Millisecond),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("attempt %d: %v (%v), %s\n", a.N, status.Code(a.Err), a.Class, a.Reason)
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
			<-ctx.Done() // a server that never answers
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	}
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, hangOnce)
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1: DeadlineExceeded (Transient), retry
	// attempt 2: OK (Permanent), succeeded
	// OK after 2 calls
}
