package interceptor_test

// Span events (an SDK TracerProvider and an in-memory exporter) and the
// observers' context and final report.

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// spanReader is a TracerProvider whose ended spans go to an in-memory exporter.
type spanReader struct {
	exp *tracetest.InMemoryExporter
	tp  *sdktrace.TracerProvider
}

func newSpanReader(t *testing.T) *spanReader {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &spanReader{exp: exp, tp: tp}
}

// run runs f under a new recording span and returns that span's events.
func (s *spanReader) run(t *testing.T, f func(ctx context.Context)) []sdktrace.Event {
	t.Helper()
	s.exp.Reset()
	ctx, span := s.tp.Tracer("test").Start(context.Background(), "call")
	f(ctx)
	span.End()
	spans := s.exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans exported, want 1", len(spans))
	}
	return spans[0].Events
}

func TestSpanEventsOfARetriedCall(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, []interceptor.Option{interceptor.WithMaxAttempts(3)}, withSpans())
	events := h.traced(func(ctx context.Context) {
		if err := h.call(ctx, &script{errs: fail(grpccodes.Unavailable, 2)}, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
	})
	want := []map[string]string{
		{"iamretry.attempt": "1", "grpc.status": "UNAVAILABLE", "iamretry.reason": "retry", "iamretry.wait": "1.5"},
		{"iamretry.attempt": "2", "grpc.status": "UNAVAILABLE", "iamretry.reason": "retry", "iamretry.wait": "2.5"},
	}
	if len(events) != len(want) {
		t.Fatalf("events %+v, want %d iamretry.retry", events, len(want))
	}
	for i, e := range events {
		if e.Name != "iamretry.retry" || !sameKVs(e.Attributes, want[i]) {
			t.Errorf("event %d: %s %v, want iamretry.retry %v", i, e.Name, e.Attributes, want[i])
		}
	}

	events = h.traced(func(ctx context.Context) {
		_ = h.call(ctx, &script{errs: fail(grpccodes.Internal, 5)}, getPolicy, nil)
	})
	if len(events) != 3 || events[2].Name != "iamretry.gave_up" ||
		!sameKVs(events[2].Attributes, map[string]string{"iamretry.attempt": "3", "grpc.status": "INTERNAL", "iamretry.reason": "max_attempts"}) {
		t.Fatalf("events %+v, want 2 retries then iamretry.gave_up at attempt 3 (max_attempts)", events)
	}

	// A permanent failure is not a give-up: no event.
	events = h.traced(func(ctx context.Context) {
		_ = h.call(ctx, &script{errs: fail(grpccodes.PermissionDenied, 1)}, getPolicy, nil)
	})
	if len(events) != 0 {
		t.Fatalf("events %+v for a permanent failure, want none", events)
	}
}

// TestSpanEventsNeedARecordingSpan: without a span, or with one that does
// not record, retries work and nothing is added.
func TestSpanEventsNeedARecordingSpan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := trace.ContextWithSpanContext(context.Background(), trace.SpanContext{})
	for _, c := range []context.Context{context.Background(), ctx} {
		if err := h.call(c, &script{errs: fail(grpccodes.Unavailable, 1)}, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := newSpanReader(t)
	notSampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSyncer(s.exp))
	ctx, span := notSampled.Tracer("test").Start(context.Background(), "call")
	if span.IsRecording() {
		t.Fatal("a NeverSample span records")
	}
	if err := h.call(ctx, &script{errs: fail(grpccodes.Unavailable, 1)}, getPolicy, nil); err != nil {
		t.Fatal(err)
	}
	span.End()
	if n := len(s.exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans exported from a provider that samples none", n)
	}
}

func sameKVs(kvs []attribute.KeyValue, want map[string]string) bool {
	if len(kvs) != len(want) {
		return false
	}
	for _, kv := range kvs {
		if want[string(kv.Key)] != kv.Value.String() {
			return false
		}
	}
	return true
}

type ctxKey struct{}

// TestObserverGetsTheCallersContextAndTheFinalReport: the observer sees
// the caller's context values on every report, the failed attempts, and a
// final Succeeded report with Err nil; a call that succeeds at once
// reports nothing.
func TestObserverGetsTheCallersContextAndTheFinalReport(t *testing.T) {
	t.Parallel()
	type seen struct {
		value any
		a     interceptor.Attempt
	}
	var got []seen
	r, err := interceptor.New(interceptor.WithClock(newHarness(t).clock), fixedRandom(0.5),
		interceptor.WithObserver(func(ctx context.Context, a interceptor.Attempt) {
			got = append(got, seen{ctx.Value(ctxKey{}), a})
		}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), ctxKey{}, "trace-42")
	s := &script{errs: fail(grpccodes.Unavailable, 2)}
	if err := r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, s.invoke); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d reports, want 3: %+v", len(got), got)
	}
	for i, g := range got {
		if g.value != "trace-42" {
			t.Errorf("report %d: context value %v, want the caller's", i, g.value)
		}
	}
	last := got[2].a
	if last.Reason != interceptor.Succeeded || last.Err != nil || last.N != 3 || last.Retrying || last.Method != getPolicy || last.Elapsed != secs(4)[0] {
		t.Fatalf("final report %+v, want Succeeded at attempt 3 after 4s", last)
	}
	if status.Code(got[0].a.Err) != grpccodes.Unavailable || got[0].a.Reason != interceptor.Retry {
		t.Fatalf("first report %+v", got[0].a)
	}

	got = nil
	if err := r.UnaryClientInterceptor()(ctx, getPolicy, nil, nil, nil, (&script{}).invoke); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("a call that succeeded at once reported %+v", got)
	}
}
