package interceptor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

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
// its observer sees. With withMeter its Retrier reports to a MeterProvider
// the harness reads (collect); with withSpans it holds a TracerProvider whose
// ended spans it keeps (traced).
type harness struct {
	t        *testing.T
	clock    *vclock.Clock
	r        *interceptor.Retrier
	attempts []interceptor.Attempt
	meter    *meterReader // withMeter, else nil
	spans    *spanReader  // withSpans, else nil
}

// harnessOption says what a harness holds beyond its Retrier.
type harnessOption func(*harnessConfig)

type harnessConfig struct{ meter, spans bool }

// withMeter gives the harness's Retrier a MeterProvider of its own, read by
// h.collect.
func withMeter() harnessOption { return func(c *harnessConfig) { c.meter = true } }

// withSpans gives the harness a TracerProvider that keeps its ended spans,
// for h.traced.
func withSpans() harnessOption { return func(c *harnessConfig) { c.spans = true } }

// newHarness builds a harness whose Retrier has opts on top of the harness's
// own (the virtual clock, r = 0.5, the recording observer).
func newHarness(t *testing.T, opts ...interceptor.Option) *harness {
	t.Helper()
	return newHarnessOf(t, opts)
}

// newHarnessOf is newHarness with harness options too: opts for the
// Retrier, hopts for the harness.
func newHarnessOf(t *testing.T, opts []interceptor.Option, hopts ...harnessOption) *harness {
	t.Helper()
	var cfg harnessConfig
	for _, o := range hopts {
		o(&cfg)
	}
	h := &harness{t: t, clock: vclock.New()}
	base := []interceptor.Option{
		interceptor.WithClock(h.clock),
		fixedRandom(0.5),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { h.attempts = append(h.attempts, a) }),
	}
	all := append(base, opts...)
	if cfg.meter {
		h.meter = newMeterReader(t)
		all = append(all, h.meter.option())
	}
	if cfg.spans {
		h.spans = newSpanReader(t)
	}
	r, err := interceptor.New(all...)
	if err != nil {
		t.Fatal(err)
	}
	h.r = r
	return h
}

// collect returns the instruments the harness's Retrier reported (withMeter).
func (h *harness) collect() map[string]metricdata.Metrics {
	h.t.Helper()
	return h.meter.collect()
}

// traced runs f under a new recording span and returns that span's events
// (withSpans).
func (h *harness) traced(f func(ctx context.Context)) []sdktrace.Event {
	h.t.Helper()
	return h.spans.run(h.t, f)
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
