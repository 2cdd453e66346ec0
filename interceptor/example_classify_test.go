package interceptor_test

import (
	"context"
	"fmt"
	"strings"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// WithClassifier replaces the retry classes: here RESOURCE_EXHAUSTED, a
// quota that refills, is also retried for one method, and everything else
// keeps the default classes (codes.OfError).
func ExampleWithClassifier() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithClassifier(func(method string, err error) codes.Class {
			if strings.HasSuffix(method, "/ListRoles") && status.Code(err) == grpccodes.ResourceExhausted {
				return codes.Transient
			}
			return codes.OfError(err)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), "/google.iam.admin.v1.IAM/ListRoles", nil, nil, nil,
		failFirst(&calls, grpccodes.ResourceExhausted))
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// OK after 2 calls
}

// WithSafeToRetry replaces the table of methods that are safe to send again
// (interceptor.SafeToRetry). Here a method of your own service, which the
// default table does not know and so never retries, is declared idempotent.
func ExampleWithSafeToRetry() {
	const method = "/example.inventory.v1.Inventory/UpsertItem"
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithSafeToRetry(func(m string, req any) bool {
			return m == method || interceptor.SafeToRetry(m, req)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("default table:", interceptor.SafeToRetry(method, nil))
	calls := 0
	err = r.UnaryClientInterceptor()(context.Background(), method, nil, nil, nil, failFirst(&calls, grpccodes.Unavailable))
	fmt.Println(status.Code(err), "after", calls, "calls")
	// Output:
	// default table: false
	// OK after 2 calls
}
