package interceptor_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// ctxAwareBase answers as a transport does: an attempt whose context has
// already ended gets the context's error and never reaches the server.
type ctxAwareBase struct {
	*scriptedBase
	sent int
}

func (b *ctxAwareBase) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	b.sent++
	return b.scriptedBase.RoundTrip(req)
}

// A wait that ends exactly at the retry deadline leaves a per-attempt
// timeout nothing: the attempt after it could not reach the server, and
// the caller would get a client-made DEADLINE_EXCEEDED in place of the
// server's last error. No such doomed attempt is made.
func TestPerAttemptTimeoutLeftNothingByTheRetryDeadline(t *testing.T) {
	t.Parallel()
	opts := []interceptor.Option{
		interceptor.WithBackoff(interceptor.Backoff{Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: interceptor.NoJitter}),
		interceptor.WithDeadline(time.Second), // the first wait (1 s) ends exactly at it
		interceptor.WithPerAttemptTimeout(10 * time.Second),
	}
	t.Run("gRPC", func(t *testing.T) {
		h := newHarness(t, opts...)
		s := &script{errs: fail(grpccodes.Unavailable, 5)}
		inv := s.realInvoker()
		err := h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil,
			func(ctx context.Context, _ string, _, _ any, _ *grpcClientConn, _ ...grpcCallOption) error {
				return inv(ctx)
			})
		if status.Code(err) != grpccodes.Unavailable {
			t.Fatalf("err %v (code %v), want the server's UNAVAILABLE; %d attempts", err, status.Code(err), s.calls)
		}
	})
	t.Run("REST", func(t *testing.T) {
		clock := vclock.New()
		base := &ctxAwareBase{scriptedBase: &scriptedBase{answers: []httpAnswer{unavailable(), unavailable(), unavailable()}}}
		r := restRetrier(t, clock, opts...)
		req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
		resp, err := r.RoundTripper(base).RoundTrip(req)
		if err != nil {
			t.Fatalf("err %v, want the server's 503 response; %d sent", err, base.sent)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
}
