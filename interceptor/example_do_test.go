package interceptor_test

import (
	"context"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// Retrier.Do retries a function of yours that you know is safe to repeat
// (several calls that make one idempotent step, a REST call), on the class of
// its error: a gRPC status, or a *googleapi.Error's HTTP code. It owns the
// retries of f: an interceptor beneath passes f's calls through.
func ExampleRetrier_Do() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s attempt %d: %v, %s, wait %v\n", a.Method, a.N, status.Code(a.Err), a.Reason, a.Wait)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	runs := 0
	err = r.Do(context.Background(), "sync-groups", func(ctx context.Context) error {
		runs++
		if runs < 3 {
			return status.Error(grpccodes.Unavailable, "try again")
		}
		return nil
	})
	fmt.Println(err, "after", runs, "runs")
	// Output:
	// sync-groups attempt 1: Unavailable, retry, wait 1s
	// sync-groups attempt 2: Unavailable, retry, wait 2s
	// sync-groups attempt 3: OK, succeeded, wait 0s
	// <nil> after 3 runs
}
