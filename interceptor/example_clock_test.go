package interceptor_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// exampleClock is a clock for examples and tests: Sleep moves its time ahead
// at once instead of waiting, so a schedule of minutes runs in no time.
// Copy it into a test of your own. (For several goroutines sleeping at once,
// use a discrete-event clock, or testing/synctest with the wall clock.)
type exampleClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *exampleClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *exampleClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	return nil
}

// failFirst stands in for the network: an invoker whose first calls fail
// with codes, in turn, and whose later calls succeed. *calls counts them.
func failFirst(calls *int, codes ...grpccodes.Code) grpc.UnaryInvoker {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		*calls++
		if *calls <= len(codes) {
			return status.Error(codes[*calls-1], "injected")
		}
		return nil
	}
}

// WithClock puts the Retrier's waits on a clock of your own: in a test, one
// whose Sleep returns at once, so the documented schedule runs in no real
// time while Now shows how long a real run would have waited.
func ExampleWithClock() {
	clk := &exampleClock{}
	r, err := interceptor.New(interceptor.WithClock(clk), interceptor.WithRandom(func() float64 { return 0 }))
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable))
	fmt.Println(status.Code(err), "after", calls, "calls and", clk.Now().Sub(time.Time{}), "of virtual waiting")
	// Output:
	// OK after 4 calls and 7s of virtual waiting
}

// WithRandom replaces the source of the jitter's random fractions (one per
// retry, in [0, 1)): a fixed value makes the waits exact in a test. In
// production the default, a concurrency-safe math/rand/v2 source, is right.
func ExampleWithRandom() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0.5 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				fmt.Println("wait", a.Wait)
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	_ = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable, grpccodes.Unavailable))
	// Output:
	// wait 1.5s
	// wait 2.5s
}
