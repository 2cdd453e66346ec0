package interceptor_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// Issue 20, item 1: whether an attempt ran out of the Retrier's own
// per-attempt timeout is decided by the attempt's deadline, not by whether
// its context has reported the error yet. A server that shaves the deadline
// it received answers DEADLINE_EXCEEDED before the client's timer fires;
// with a classifier that calls DEADLINE_EXCEEDED permanent, such an attempt
// was not retried (shave > 0: always; shave 0: from run to run).

// permanentDeadline is a classifier that does not list DEADLINE_EXCEEDED
// (nor 504) as transient.
func permanentDeadline(_ string, err error) codes.Class {
	var ae *googleapi.Error
	if status.Code(err) == grpccodes.DeadlineExceeded || errors.As(err, &ae) && ae.Code == http.StatusGatewayTimeout {
		return codes.Permanent
	}
	return codes.OfError(err)
}

// untilShaved sleeps (wall clock) until shave before ctx's deadline.
func untilShaved(ctx context.Context, shave time.Duration) {
	dl, ok := ctx.Deadline()
	if !ok {
		panic("the attempt has no deadline")
	}
	time.Sleep(time.Until(dl.Add(-shave)))
}

const cutTimeout = 200 * time.Millisecond

func TestOwnPerAttemptDeadlineDecidesTheCut(t *testing.T) {
	t.Parallel()
	for _, shave := range []time.Duration{0, 5 * time.Millisecond, cutTimeout / 10} {
		t.Run("gRPC/shave="+shave.String(), func(t *testing.T) {
			h := newHarness(t, interceptor.WithPerAttemptTimeout(cutTimeout), interceptor.WithClassifier(permanentDeadline))
			var calls atomic.Int32
			err := h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil,
				func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
					if calls.Add(1) == 1 {
						untilShaved(ctx, shave)
						return status.Error(grpccodes.DeadlineExceeded, "deadline exceeded (shaved)")
					}
					return nil
				})
			if err != nil || calls.Load() != 2 {
				t.Fatalf("err %v after %d calls, want the cut attempt retried", err, calls.Load())
			}
			if a := h.attempts[0]; a.Class != codes.Transient || a.Reason != interceptor.Retry {
				t.Fatalf("attempt 1: %+v", a)
			}
		})
		t.Run("REST/shave="+shave.String(), func(t *testing.T) {
			var calls atomic.Int32
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if calls.Add(1) == 1 {
					untilShaved(req.Context(), shave)
					return jsonAnswer(http.StatusGatewayTimeout, "DEADLINE_EXCEEDED"), nil
				}
				return jsonAnswer(http.StatusOK, ""), nil
			})
			r := restRetrier(t, vclock.New(), interceptor.WithPerAttemptTimeout(cutTimeout), interceptor.WithClassifier(permanentDeadline))
			req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
			resp, err := r.RoundTripper(base).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
				t.Fatalf("status %d after %d calls, want the cut attempt retried", resp.StatusCode, calls.Load())
			}
		})
	}
	// A transport error at the deadline, before the attempt's context said
	// so, is a cut too.
	t.Run("REST/transport error at the deadline", func(t *testing.T) {
		var calls atomic.Int32
		base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 {
				untilShaved(req.Context(), 0)
				return nil, errors.New("read tcp: i/o timeout")
			}
			return jsonAnswer(http.StatusOK, ""), nil
		})
		r := restRetrier(t, vclock.New(), interceptor.WithPerAttemptTimeout(cutTimeout), interceptor.WithClassifier(func(string, error) codes.Class { return codes.Permanent }))
		req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
		resp, err := r.RoundTripper(base).RoundTrip(req)
		if err != nil {
			t.Fatalf("err %v after %d calls, want the cut attempt retried", err, calls.Load())
		}
		resp.Body.Close()
	})
}

// A server's DEADLINE_EXCEEDED well before the attempt's own deadline is
// the server's (its own timeout): the classifier decides. The server
// answers at once, an hour before the attempt's deadline (the shave
// allowed is at most maxShave): no wait on the wall clock decides it.
func TestServerDeadlineWellBeforeOwnIsTheClassifiers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithPerAttemptTimeout(time.Hour), interceptor.WithClassifier(permanentDeadline))
	var calls atomic.Int32
	err := h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			calls.Add(1)
			return status.Error(grpccodes.DeadlineExceeded, "the server's own timeout")
		})
	if status.Code(err) != grpccodes.DeadlineExceeded || calls.Load() != 1 || h.attempts[0].Reason != interceptor.NotRetryable {
		t.Fatalf("err %v, %d calls, attempts %+v: want the classifier's answer", err, calls.Load(), h.attempts)
	}
	// Nor is the caller's own deadline a cut, when it comes first.
	h2 := newHarness(t, interceptor.WithPerAttemptTimeout(time.Hour), interceptor.WithClassifier(permanentDeadline))
	ctx, cancel := context.WithTimeout(context.Background(), cutTimeout/4)
	defer cancel()
	calls.Store(0)
	_ = h2.r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil,
		func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			calls.Add(1)
			untilShaved(ctx, 0)
			return status.Error(grpccodes.DeadlineExceeded, "caller's deadline")
		})
	if calls.Load() != 1 || h2.attempts[0].Class == codes.Transient && h2.attempts[0].Reason == interceptor.Retry {
		t.Fatalf("caller's deadline: %d calls, attempts %+v", calls.Load(), h2.attempts)
	}
}

// jsonAnswer is a response with a Google JSON error body of status s ("":
// an empty JSON object).
func jsonAnswer(code int, s string) *http.Response {
	body := "{}"
	if s != "" {
		body = `{"error":{"code":` + strconv.Itoa(code) + `,"message":"m","status":"` + s + `"}}`
	}
	return &http.Response{
		StatusCode: code,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
	}
}
