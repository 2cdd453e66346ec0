package interceptor_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// TestRESTPerAttemptCutWrapsDeadlineExceeded (issue 33 item 5): over REST
// without an owner above, a call whose every attempt was cut by the
// per-attempt timeout ends with an error that satisfies
// errors.Is(err, context.DeadlineExceeded), as net/http's own timeouts do
// (its code stays DEADLINE_EXCEEDED); under an owner (Do) the cut stays
// unwrapped, so that the owner retries it.
func TestRESTPerAttemptCutWrapsDeadlineExceeded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		hang := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			calls++
			<-req.Context().Done()
			return nil, req.Context().Err()
		})
		r, err := interceptor.New(interceptor.WithPerAttemptTimeout(time.Second), interceptor.WithMaxAttempts(2), interceptor.WithRandom(halfRandom))
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Transport: r.RoundTripper(hang)}
		_, err = hc.Get("https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
		if calls != 2 {
			t.Fatalf("%d attempts, want 2", calls)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("after every attempt was cut: errors.Is(%v, context.DeadlineExceeded) is false", err)
		}
		if c := codes.CodeOf(err); c != grpccodes.DeadlineExceeded {
			t.Errorf("code %v, want DEADLINE_EXCEEDED", c)
		}

		calls = 0
		var inner error
		_ = r.Do(context.Background(), "read", func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com", nil)
			_, inner = hc.Do(req)
			return inner
		})
		if calls != 2 {
			t.Fatalf("under Do: %d attempts, want 2 (Do retries the cut)", calls)
		}
		if errors.Is(inner, context.DeadlineExceeded) {
			t.Errorf("under Do, the cut %v wraps context.DeadlineExceeded: an owner would take it for the caller's deadline", inner)
		}
	})
}
