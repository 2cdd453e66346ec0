package interceptor_test

import (
	"context"
	"fmt"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// ScaledConflicts, the default conflict schedule, scales its waits to how
// long the read-modify-write takes. Here each read takes 2 s (a slow
// object) and another writer lands first twice: the first rerun's wait
// assumes 100 ms (nothing was timed yet), the second is drawn from windows
// of the measured 2 s: between what is left of 200 s/6 and of 200 s (the
// horizon, 100w) after the first conflict, here halfway.
func ExampleScaledConflicts() {
	clk := &exampleClock{}
	r, err := interceptor.New(
		interceptor.WithClock(clk),
		interceptor.WithRandom(func() float64 { return 0.5 }),
		interceptor.WithDeadline(300*time.Second),
		interceptor.WithMaxBackoff(5*time.Minute),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Err != nil {
				fmt.Printf("attempt %d: %v, wait %v\n", a.N, a.Class, a.Wait.Round(time.Millisecond))
			}
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	stolen := 0
	_, err = interceptor.Transact(context.Background(), r, interceptor.ReadModifyWrite[string]{
		Method: "example.Slow/Add",
		Read: func(ctx context.Context) (string, error) {
			_ = clk.Sleep(ctx, 2*time.Second)
			return "etag", nil
		},
		Modify: func(v string) (string, bool, error) { return v, true, nil },
		Write: func(context.Context, string) (string, error) {
			if stolen < 2 {
				stolen++
				return "", status.Error(grpccodes.Aborted, "concurrent change")
			}
			return "written", nil
		},
		Etag: func(v string) string { return v },
	})
	fmt.Println("err:", err)
	// Output:
	// attempt 1: Conflict, wait 424ms
	// attempt 2: Conflict, wait 1m54.242s
	// err: <nil>
}
