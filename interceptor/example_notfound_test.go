package interceptor_test

import (
	"context"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// getServiceAccount is the method of the examples below.
const getServiceAccount = "/google.iam.admin.v1.IAM/GetServiceAccount"

// WithRetryNotFound makes every call of the Retrier retry NOT_FOUND (404):
// IAM is eventually consistent, and a service account just created may not
// be visible for a while. Without it, NOT_FOUND is returned at once.
func ExampleWithRetryNotFound() {
	for _, opts := range [][]interceptor.Option{nil, {interceptor.WithRetryNotFound()}} {
		r, err := interceptor.New(append(opts, interceptor.WithClock(&exampleClock{}))...)
		if err != nil {
			fmt.Println(err)
			return
		}
		calls := 0
		err = r.UnaryClientInterceptor()(context.Background(), getServiceAccount, nil, nil, nil,
			failFirst(&calls, grpccodes.NotFound, grpccodes.NotFound))
		fmt.Println(status.Code(err), "after", calls, "calls")
	}
	// Output:
	// NotFound after 1 calls
	// OK after 3 calls
}

// RetryNotFound opts one call into NOT_FOUND retries: the read right after
// a create. On a GAPIC client pass it as
// gax.WithGRPCOptions(interceptor.RetryNotFound()).
func ExampleRetryNotFound() {
	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), getServiceAccount, nil, nil, nil,
		failFirst(&calls, grpccodes.NotFound, grpccodes.NotFound), interceptor.RetryNotFound())
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// OK after 3 calls
}

// Disable turns retries off for one call: it gets the server's first answer.
// On a GAPIC client pass it as gax.WithGRPCOptions(interceptor.Disable()).
func ExampleDisable() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { fmt.Println("attempt", a.N, a.Reason) }),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), getServiceAccount, nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable), interceptor.Disable())
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// attempt 1 retries disabled for the call
	// Unavailable after 1 calls
}
