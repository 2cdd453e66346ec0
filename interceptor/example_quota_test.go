package interceptor_test

import (
	"context"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// A quota rejection without the server's delay (no RetryInfo, no
// Retry-After) is retried no sooner than QuotaWait, 30 s, then 60 s, ...
// (plus up to a tenth; none here): with the default 60 s deadline, the
// second rejection ends the call at once with the server's error.
func ExampleQuotaWait() {
	r, err := interceptor.New(
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
	calls := 0
	err = r.Do(context.Background(), "create", func(context.Context) error {
		calls++
		return status.Error(grpccodes.ResourceExhausted, "Quota exceeded for quota metric 'Write requests'")
	})
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1: retry, wait 30s
	// attempt 2: retry deadline reached, wait 0s
	// ResourceExhausted after 2 calls
}
