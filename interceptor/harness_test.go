package interceptor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const getPolicy = "/google.iam.v1.IAMPolicy/GetIamPolicy"

// script is an invoker that fails with errs in turn, then succeeds.
type script struct {
	mu    sync.Mutex
	errs  []error
	calls int
	mds   []metadata.MD // outgoing metadata seen by each attempt
	ctxs  []context.Context
	block int // the first block attempts wait for their context to end
}

func (s *script) invoke(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
	s.mu.Lock()
	i := s.calls
	s.calls++
	md, _ := metadata.FromOutgoingContext(ctx)
	s.mds = append(s.mds, md)
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	if i < s.block {
		<-ctx.Done()
		return contextStatus(ctx)
	}
	if i < len(s.errs) {
		return s.errs[i]
	}
	return nil
}

// fixedRandom makes every jitter draw r.
func fixedRandom(r float64) interceptor.Option {
	return interceptor.WithRandom(func() float64 { return r })
}

// harness builds a Retrier on a virtual clock with r = 0.5 and records what
// its observer sees.
type harness struct {
	t        *testing.T
	clock    *vclock.Clock
	r        *interceptor.Retrier
	attempts []interceptor.Attempt
}

func newHarness(t *testing.T, opts ...interceptor.Option) *harness {
	t.Helper()
	h := &harness{t: t, clock: vclock.New()}
	base := []interceptor.Option{
		interceptor.WithClock(h.clock),
		fixedRandom(0.5),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { h.attempts = append(h.attempts, a) }),
	}
	r, err := interceptor.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	h.r = r
	return h
}

func (h *harness) call(ctx context.Context, s *script, method string, req any, opts ...grpc.CallOption) error {
	return h.r.UnaryClientInterceptor()(ctx, method, req, nil, nil, s.invoke, opts...)
}

func secs(fs ...float64) []time.Duration {
	out := make([]time.Duration, len(fs))
	for i, f := range fs {
		out[i] = time.Duration(f * float64(time.Second))
	}
	return out
}

// contextStatus is what gRPC returns when an attempt's context ends.
func contextStatus(ctx context.Context) error { return status.FromContextError(ctx.Err()).Err() }

// Short names for the gRPC types some test signatures spell.
type (
	grpcClientConn = grpc.ClientConn
	grpcCallOption = grpc.CallOption
)

// callWith runs one GetIamPolicy through r with inv as the invoker.
func callWith(r *interceptor.Retrier, inv grpc.UnaryInvoker) error {
	return r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, inv)
}
