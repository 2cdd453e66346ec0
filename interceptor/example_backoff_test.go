package interceptor_test

import (
	"context"
	"fmt"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
)

// The IAM guidance's schedule: before retry n, wait min(2^n + random_fraction,
// maximum_backoff) seconds. Delay is pure, so the schedule can be printed for
// the lowest (r = 0) and highest (r -> 1) random fraction.
func ExampleBackoff_Delay() {
	b := interceptor.DefaultBackoff()
	for n := range 7 {
		fmt.Printf("retry %d: wait %v to %v\n", n, b.Delay(n, 0), b.Delay(n, 0.999))
	}
	// Output:
	// retry 0: wait 1s to 1.999s
	// retry 1: wait 2s to 2.999s
	// retry 2: wait 4s to 4.999s
	// retry 3: wait 8s to 8.999s
	// retry 4: wait 16s to 16.999s
	// retry 5: wait 32s to 32s
	// retry 6: wait 32s to 32s
}

// WithBackoff replaces the schedule: here a first wait of 100 ms, tripling,
// capped at 1 s, with full jitter (a wait drawn from (0, base]).
func ExampleWithBackoff() {
	r, err := interceptor.New(
		interceptor.WithBackoff(interceptor.Backoff{
			Initial: 100 * time.Millisecond, Multiplier: 3, Max: time.Second, Jitter: interceptor.FullJitter,
		}),
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
		failFirst(&calls, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable, grpccodes.Unavailable))
	// Output:
	// wait 50ms
	// wait 150ms
	// wait 450ms
	// wait 500ms
}

// WithMaxBackoff sets maximum_backoff, the cap of every wait: the guidance
// says 32 or 64 seconds; 64 suits a CI/CD pipeline that is not in a hurry
// (with a longer deadline, here 300 s).
func ExampleWithMaxBackoff() {
	r, err := interceptor.New(
		interceptor.WithMaxBackoff(64*time.Second),
		interceptor.WithDeadline(300*time.Second),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				fmt.Print(a.Wait, " ")
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	down := make([]grpccodes.Code, 8)
	for i := range down {
		down[i] = grpccodes.Unavailable
	}
	_ = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil,
		failFirst(&calls, down...))
	fmt.Println()
	// Output:
	// 1s 2s 4s 8s 16s 32s 1m4s 1m4s
}
