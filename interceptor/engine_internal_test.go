package interceptor

import (
	"context"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stillClock never moves: only the budget or the attempt cap can stop retries.
type stillClock struct{ now time.Time }

func (c stillClock) Now() time.Time                                   { return c.now }
func (c stillClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// Conflict reruns of a read-modify-write do not spend the retry budget
// (moved here from budget_test.go when Task left the API), nor count toward
// the attempt cap.
func TestConflictRerunsDoNotSpendBudget(t *testing.T) {
	t.Parallel()
	r, err := New(WithClock(stillClock{time.Unix(1e9, 0)}), WithRetryBudget(0.01, 0.001), WithMaxAttempts(2))
	if err != nil {
		t.Fatal(err)
	}
	aborted := status.Error(grpccodes.Aborted, "concurrent change")
	n := 0
	_, err = Transact(context.Background(), r, ReadModifyWrite[int]{
		Method: "iamretry.policy/Update",
		Read:   func(context.Context) (int, error) { return 0, nil },
		Modify: func(v int) (int, bool, error) { return v, true, nil },
		Write: func(context.Context, int) (int, error) {
			n++
			if n < 400 { // far more than the bank's 100 tokens
				return 0, aborted
			}
			return 0, nil
		},
		Etag: func(int) string { return "e" },
	})
	if err != nil || n != 400 {
		t.Fatalf("n %d err %v", n, err)
	}
}
