package interceptor_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// WithObserver hands every failed attempt, with what the Retrier decided, to
// a function of yours: for metrics, traces or a progress line.
func ExampleWithObserver() {
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s attempt %d: %v, class %v, %s, wait %v, retrying %v\n",
				a.Method, a.N, status.Code(a.Err), a.Class, a.Reason, a.Wait, a.Retrying)
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	_ = r.UnaryClientInterceptor()(context.Background(), "/google.iam.admin.v1.IAM/GetRole", nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable, grpccodes.PermissionDenied))
	// Output:
	// /google.iam.admin.v1.IAM/GetRole attempt 1: Unavailable, class Transient, retry, wait 1s, retrying true
	// /google.iam.admin.v1.IAM/GetRole attempt 2: PermissionDenied, class Permanent, not retryable, wait 0s, retrying false
}

// WithLogger takes go-grpc-middleware's logging.Logger: a retry is logged at
// Info, a retryable failure given up at Warn, one not retried by its nature
// at Debug. Any logger with an adapter fits; with log/slog:
//
//	logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
//		slog.Default().Log(ctx, slog.Level(lvl), msg, fields...)
//	})
//
// Here a LoggerFunc prints the level (as slog names it), the message and
// three of the fields (the metrics' keys and values; waits in seconds).
func ExampleWithLogger() {
	logger := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		f := map[string]any{}
		for i := 0; i+1 < len(fields); i += 2 {
			f[fmt.Sprint(fields[i])] = fields[i+1]
		}
		fmt.Println(slog.Level(lvl), msg, f["grpc.status"], f["iamretry.reason"], f["iamretry.wait"])
	})
	r, err := interceptor.New(
		interceptor.WithLogger(logger),
		interceptor.WithMaxAttempts(2),
		interceptor.WithClock(&exampleClock{}),
		interceptor.WithRandom(func() float64 { return 0 }),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	calls := 0
	_ = r.UnaryClientInterceptor()(context.Background(), "/google.iam.admin.v1.IAM/GetRole", nil, nil, nil,
		failFirst(&calls, grpccodes.Unavailable, grpccodes.Unavailable))
	// Output:
	// INFO iamretry: retrying UNAVAILABLE retry 1
	// WARN iamretry: giving up UNAVAILABLE max_attempts 0
}
