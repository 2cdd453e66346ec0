package interceptor_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// callDuringOutage makes n calls through r to a server that is down.
func callDuringOutage(r *interceptor.Retrier, n int) {
	down := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		return status.Error(grpccodes.Unavailable, "down")
	}
	for range n {
		_ = r.UnaryClientInterceptor()(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, down)
	}
}

// WithRetryBudget bounds the retries of all the calls of one Retrier, so
// that an outage does not turn into a retry storm: here retries may reach
// 10% of calls, with no tokens refilled by time. A fresh Retrier starts with
// a full bank, so a lone failing call runs its whole schedule. During an
// outage, 100 calls of at most 3 attempts each: of the 200 retries the
// schedule allows (see the WithoutRetryBudget example), the budget lets 109
// through while its bank lasts, then refuses, and observers see
// BudgetExhausted.
func ExampleWithRetryBudget() {
	retries, refused := 0, 0
	r, err := interceptor.New(
		interceptor.WithRetryBudget(0.1, 0),
		interceptor.WithMaxAttempts(3),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			switch a.Reason {
			case interceptor.Retry:
				retries++
			case interceptor.BudgetExhausted:
				refused++
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	callDuringOutage(r, 100)
	fmt.Println("retries:", retries, "refused:", refused)
	// Output:
	// retries: 109 refused: 48
}

// WithoutRetryBudget turns the budget off: every retry the schedule allows
// is made. Right for a lone client or a test, not for a fleet.
func ExampleWithoutRetryBudget() {
	retries := 0
	r, err := interceptor.New(
		interceptor.WithoutRetryBudget(),
		interceptor.WithMaxAttempts(3),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Reason == interceptor.Retry {
				retries++
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	callDuringOutage(r, 100)
	fmt.Println("retries:", retries)
	// Output:
	// retries: 200
}
