package interceptor_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// TestTransactREST504JustBeforeTimeoutIsCut: under Transact, a Read over a
// REST client answering 504 (a *googleapi.Error) within a tenth of the
// per-attempt timeout before it ends was cut by that timeout, as a gRPC
// DEADLINE_EXCEEDED is (WithPerAttemptTimeout): it is rerun whatever the
// classifier says.
func TestTransactREST504JustBeforeTimeoutIsCut(t *testing.T) {
	t.Parallel()
	const d = 200 * time.Millisecond // shave: 20 ms
	never := func(string, error) codes.Class { return codes.Permanent }
	h := newHarness(t, interceptor.WithPerAttemptTimeout(d), interceptor.WithClassifier(never))
	s := &etagStore{}
	n := 0
	s.readHook = func(ctx context.Context) error {
		if n++; n == 1 {
			dl, _ := ctx.Deadline()
			time.Sleep(time.Until(dl) - 10*time.Millisecond) // the server's shaved deadline
			return &googleapi.Error{Code: 504, Body: `{"error":{"code":504,"status":"DEADLINE_EXCEEDED"}}`}
		}
		return nil
	}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatalf("a 504 at the per-attempt deadline was not rerun: %v", err)
	}
}
