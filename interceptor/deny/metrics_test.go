package deny_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestMetricsUnderUpdateMethod: an Updater's writes and conflicts are
// counted under grpc.method = deny.UpdateMethod, a value of its own (the
// interceptor's table of this library's read-modify-writes knows it), not
// "other".
func TestMetricsUnderUpdateMethod(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	e := newEnv(t, "grpc", []interceptor.Option{interceptor.WithMeterProvider(mp)})
	e.seed(rule(0))
	e.srv.SetDenyStaleEtagInOperation(true)
	e.srv.ConcurrentWriteNext(iamtest.MethodUpdatePolicy, 2)
	if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1))); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok {
				got[m.Name] = map[string]int64{}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("grpc.method")
					got[m.Name][v.AsString()] += p.Value
				}
			}
		}
	}
	if w := got["iamretry.policy.update.writes"]; len(w) != 1 || w[deny.UpdateMethod] != 3 {
		t.Errorf("writes %v, want {%s: 3}", w, deny.UpdateMethod)
	}
	if c := got["iamretry.policy.update.conflicts"]; len(c) != 1 || c[deny.UpdateMethod] != 2 {
		t.Errorf("conflicts %v, want {%s: 2}", c, deny.UpdateMethod)
	}
}
