package interceptor_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// Issue 10, item 3: an attempt cut off by the Retrier's own per-attempt
// timeout is Transient whatever the classifier says, while the caller's
// context lives.
func TestOwnPerAttemptTimeoutIsTransientWhateverTheClassifierSays(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		interceptor.WithPerAttemptTimeout(20*time.Millisecond),
		interceptor.WithClassifier(func(_ string, err error) codes.Class {
			if status.Code(err) == grpccodes.DeadlineExceeded {
				return codes.Permanent // a classifier that does not list DEADLINE_EXCEEDED
			}
			return codes.OfError(err)
		}))
	s := &script{block: 1}
	if err := h.call(context.Background(), s, getPolicy, nil); err != nil || s.calls != 2 {
		t.Fatalf("calls %d err %v", s.calls, err)
	}
	if a := h.attempts[0]; a.Class != codes.Transient || a.Reason != interceptor.Retry {
		t.Fatalf("attempt 1: %+v", a)
	}
	// The server's own DEADLINE_EXCEEDED (not our cut) stays the classifier's.
	h2 := newHarness(t, interceptor.WithPerAttemptTimeout(time.Hour),
		interceptor.WithClassifier(func(string, error) codes.Class { return codes.Permanent }))
	s2 := &script{errs: fail(grpccodes.DeadlineExceeded, 1)}
	_ = h2.call(context.Background(), s2, getPolicy, nil)
	if s2.calls != 1 || h2.attempts[0].Reason != interceptor.NotRetryable {
		t.Fatalf("server's DEADLINE_EXCEEDED: calls %d attempts %+v", s2.calls, h2.attempts)
	}
	// The caller's own deadline ending is not retried.
	h3 := newHarness(t, interceptor.WithPerAttemptTimeout(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s3 := &script{block: 1}
	_ = h3.call(ctx, s3, getPolicy, nil)
	if s3.calls != 1 || h3.attempts[0].Reason != interceptor.ContextDone {
		t.Fatalf("caller's deadline: calls %d attempts %+v", s3.calls, h3.attempts)
	}
}

// Issue 10, item 4: with WithPushback the wait is the larger of RetryInfo's
// delay and the trailer's; a trailer that forbids the retry still ends it.
func TestPushbackNeverBelowRetryInfo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithPushback())
	trailers := []string{"0", "7000", "-1"}
	calls := 0
	inv := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
		i := calls
		calls++
		for _, o := range opts {
			if tr, ok := o.(grpc.TrailerCallOption); ok {
				*tr.TrailerAddr = metadata.Pairs(interceptor.PushbackTrailer, trailers[i])
			}
		}
		return withRetryInfo(grpccodes.Unavailable, 5*time.Second)
	}
	_ = h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, inv)
	if calls != 3 {
		t.Fatalf("calls %d", calls)
	}
	if got, want := h.clock.Sleeps(), secs(5, 7); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if r := h.attempts[2].Reason; r != interceptor.ServerPushback {
		t.Fatalf("last reason %v", r)
	}
}

// Issue 10, item 6: a definite rejection (an opted-in NOT_FOUND) may be
// retried even for a method unsafe to replay; an ambiguous outcome of an
// unsafe method never is, whatever the classifier says.
func TestDefiniteRejectionsOfUnsafeMethodsRetriedAmbiguousNever(t *testing.T) {
	t.Parallel()
	const createKey = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"
	h := newHarness(t)
	s := &script{errs: fail(grpccodes.NotFound, 2)}
	if err := h.call(context.Background(), s, createKey, nil, interceptor.RetryNotFound()); err != nil || s.calls != 3 {
		t.Fatalf("NOT_FOUND opted in: calls %d err %v", s.calls, err)
	}
	h = newHarness(t)
	s = &script{errs: fail(grpccodes.NotFound, 1)}
	if _ = h.call(context.Background(), s, createKey, nil); s.calls != 1 || h.attempts[0].Reason != interceptor.NotRetryable {
		t.Fatalf("NOT_FOUND without the opt-in: calls %d attempts %+v", s.calls, h.attempts)
	}
	for _, c := range []grpccodes.Code{grpccodes.Unavailable, grpccodes.Internal, grpccodes.DeadlineExceeded, grpccodes.Unknown} {
		h := newHarness(t, interceptor.WithRetryNotFound(),
			interceptor.WithClassifier(func(string, error) codes.Class { return codes.Transient }))
		s := &script{errs: fail(c, 1)}
		_ = h.call(context.Background(), s, createKey, nil, interceptor.RetryNotFound())
		if s.calls != 1 || h.attempts[0].Reason != interceptor.Unsafe {
			t.Errorf("%v: calls %d attempts %+v", c, s.calls, h.attempts)
		}
	}
}
