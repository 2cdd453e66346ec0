package policy_test

// The Updater's OpenTelemetry instruments and span events.

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// collect returns the int64 sums and histograms of reader by name, each
// as its points' values keyed by their grpc.method attribute.
func collect(t *testing.T, reader *sdkmetric.ManualReader) (sums map[string]map[string]int64, hists map[string]map[string]int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	sums, hists = map[string]map[string]int64{}, map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				sums[m.Name] = map[string]int64{}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("grpc.method")
					if p.Attributes.Len() != 1 {
						t.Fatalf("%s point has attributes %v, want grpc.method only", m.Name, p.Attributes.ToSlice())
					}
					sums[m.Name][v.AsString()] += p.Value
				}
			case metricdata.Histogram[int64]:
				hists[m.Name] = map[string]int64{}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("grpc.method")
					hists[m.Name][v.AsString()] += p.Sum
				}
			}
		}
	}
	return sums, hists
}

// TestUpdaterMetricsCountWritesAndConflicts: three concurrent writers get
// in before the Updater's write; the fourth write lands. Four writes, three
// conflicts, one call that retried three times, all under
// grpc.method = policy.UpdateMethod.
func TestUpdaterMetricsCountWritesAndConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n <= 3 { // a concurrent writer commits first
			e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
				{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
		}
		return nil
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	u, _ := updater(t, h, interceptor.WithMeterProvider(mp))
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	sums, hists := collect(t, reader)
	m := policy.UpdateMethod
	if got := sums["iamretry.policy.update.writes"]; len(got) != 1 || got[m] != 4 {
		t.Errorf("writes %v, want {%s: 4}", got, m)
	}
	if got := sums["iamretry.policy.update.conflicts"]; len(got) != 1 || got[m] != 3 {
		t.Errorf("conflicts %v, want {%s: 3}", got, m)
	}
	if got := sums["iamretry.client.calls"]; len(got) != 1 || got[m] != 1 {
		t.Errorf("calls %v, want {%s: 1}", got, m)
	}
	if got := hists["iamretry.client.call.retries"]; len(got) != 1 || got[m] != 3 {
		t.Errorf("retries %v, want {%s: 3}", got, m)
	}
	if got := sums["iamretry.client.call.gave_up"]; len(got) != 0 {
		t.Errorf("gave_up %v, want none", got)
	}
}

// TestBatchSpanEventsReachEveryWaitingCaller: two callers coalesced into
// one batch whose write meets a conflict: each caller's own span gets the
// batch's iamretry.retry event.
func TestBatchSpanEventsReachEveryWaitingCaller(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	x.h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 2 { // the coalesced batch's first write: another writer got in
			x.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
				{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
		}
		return nil
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("test")

	ctxA, spanA := tracer.Start(context.Background(), "A")
	ctxB, spanB := tracer.Start(context.Background(), "B")
	a := x.queue(t, ctxA, policy.AddBinding("roles/viewer", "user:a@example.com"))
	b := x.queue(t, ctxB, policy.AddBinding("roles/viewer", "user:b@example.com"))
	x.release()
	for _, ch := range []chan result{x.first, a, b} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	spanA.End()
	spanB.End()
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	for _, s := range spans {
		if len(s.Events) != 1 || s.Events[0].Name != "iamretry.retry" {
			t.Errorf("span %s events %+v, want one iamretry.retry", s.Name, s.Events)
		}
	}
}
