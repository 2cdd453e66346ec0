package interceptor_test

// The OpenTelemetry instruments (WithMeterProvider), read through an SDK
// MeterProvider and a ManualReader, on the virtual clock.

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// meterReader is a ManualReader and the option that wires it into a Retrier
// (a harness holds one withMeter; a test that shares one or has no harness
// builds its own).
type meterReader struct {
	t      *testing.T
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newMeterReader(t *testing.T) *meterReader {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &meterReader{t: t, reader: reader, mp: mp}
}

func (m *meterReader) option() interceptor.Option { return interceptor.WithMeterProvider(m.mp) }

// collect returns the instruments of the meter interceptor.MeterName, by name.
func (m *meterReader) collect() map[string]metricdata.Metrics {
	m.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		m.t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != interceptor.MeterName {
			m.t.Fatalf("scope %q, want %q", sm.Scope.Name, interceptor.MeterName)
		}
		for _, mt := range sm.Metrics {
			out[mt.Name] = mt
		}
	}
	return out
}

// attrs is a data point's attributes as a map.
func attrs(s attribute.Set) map[string]string {
	out := map[string]string{}
	for _, kv := range s.ToSlice() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func sameAttrs(got attribute.Set, want map[string]string) bool {
	g := attrs(got)
	if len(g) != len(want) {
		return false
	}
	for k, v := range want {
		if g[k] != v {
			return false
		}
	}
	return true
}

// sum returns the value of the Int64 sum point with exactly the attributes
// want, and whether there is one.
func sum(t *testing.T, ms map[string]metricdata.Metrics, name string, want map[string]string) (int64, bool) {
	t.Helper()
	mt, ok := ms[name]
	if !ok {
		return 0, false
	}
	s, ok := mt.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T, want a Sum[int64]", name, mt.Data)
	}
	if !s.IsMonotonic {
		t.Fatalf("%s is not monotonic", name)
	}
	for _, dp := range s.DataPoints {
		if sameAttrs(dp.Attributes, want) {
			return dp.Value, true
		}
	}
	return 0, false
}

// points returns the number of data points of name.
func points(ms map[string]metricdata.Metrics, name string) int {
	switch d := ms[name].Data.(type) {
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Histogram[int64]:
		return len(d.DataPoints)
	case metricdata.Histogram[float64]:
		return len(d.DataPoints)
	}
	return 0
}

func histogram[N int64 | float64](t *testing.T, ms map[string]metricdata.Metrics, name string, want map[string]string) metricdata.HistogramDataPoint[N] {
	t.Helper()
	h, ok := ms[name].Data.(metricdata.Histogram[N])
	if !ok {
		t.Fatalf("%s is a %T, want a Histogram", name, ms[name].Data)
	}
	for _, dp := range h.DataPoints {
		if sameAttrs(dp.Attributes, want) {
			return dp
		}
	}
	t.Fatalf("%s has no point with attributes %v: %+v", name, want, h.DataPoints)
	return metricdata.HistogramDataPoint[N]{}
}

const getPolicyAttr = "google.iam.v1.IAMPolicy/GetIamPolicy"

func TestMetricsRetriedTwiceThenOK(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	if err := h.call(context.Background(), &script{errs: fail(grpccodes.Unavailable, 2)}, getPolicy, nil); err != nil {
		t.Fatal(err)
	}
	ms := h.collect()
	method := map[string]string{"grpc.method": getPolicyAttr}
	if n, ok := sum(t, ms, "iamretry.client.calls", method); !ok || n != 1 {
		t.Fatalf("calls %d (found %v), want 1", n, ok)
	}
	r := histogram[int64](t, ms, "iamretry.client.call.retries", method)
	if r.Count != 1 || r.Sum != 2 || !slices.Equal(r.Bounds, []float64{1, 2, 3, 4, 5}) {
		t.Fatalf("retries %+v, want one call with 2 retries, buckets 1..5", r)
	}
	var waited time.Duration
	for _, s := range h.clock.Sleeps() {
		waited += s
	}
	d := histogram[float64](t, ms, "iamretry.client.call.retry_delay", method)
	if d.Count != 1 || d.Sum != waited.Seconds() || waited != 4*time.Second {
		t.Fatalf("retry_delay %+v, want one call that waited %v (the virtual waits 1.5s + 2.5s)", d, waited)
	}
	if ms["iamretry.client.call.retry_delay"].Unit != "s" {
		t.Fatalf("retry_delay unit %q", ms["iamretry.client.call.retry_delay"].Unit)
	}
	if points(ms, "iamretry.client.call.gave_up") != 0 {
		t.Fatalf("gave_up recorded for a call that succeeded: %+v", ms["iamretry.client.call.gave_up"])
	}
}

func TestMetricsSuccessAtOnceCountsOnlyTheCall(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	for range 3 {
		if err := h.call(context.Background(), &script{}, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
	}
	ms := h.collect()
	if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": getPolicyAttr}); n != 3 {
		t.Fatalf("calls %d, want 3", n)
	}
	for _, name := range []string{"iamretry.client.call.retries", "iamretry.client.call.retry_delay", "iamretry.client.call.gave_up"} {
		if points(ms, name) != 0 {
			t.Fatalf("%s recorded for calls that never retried (A96: 0 is not reported)", name)
		}
	}
}

// TestMetricsGaveUpByReason: a give-up at the retry deadline, at the attempt
// cap, by the budget, by the context deadline and for an unsafe method each
// add one gave_up with its reason and the status of the error returned.
func TestMetricsGaveUpByReason(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reason string
		opts   []interceptor.Option
		method string
		calls  int // the first calls-1 use up what the last one lacks
		fails  int // failures of each call before it would succeed
	}{
		{reason: "deadline", opts: []interceptor.Option{interceptor.WithDeadline(3 * time.Second)}, fails: 5},
		{reason: "max_attempts", opts: []interceptor.Option{interceptor.WithMaxAttempts(2)}, fails: 5},
		{reason: "budget", opts: []interceptor.Option{interceptor.WithRetryBudget(0, 0.001)}, calls: 2, fails: 1},
		{reason: "unsafe", method: "/google.iam.admin.v1.IAM/CreateServiceAccountKey", fails: 1},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			h := newHarnessOf(t, c.opts, withMeter())
			method := getPolicy
			if c.method != "" {
				method = c.method
			}
			var err error
			for range max(c.calls, 1) {
				err = h.call(context.Background(), &script{errs: fail(grpccodes.Unavailable, c.fails)}, method, nil)
			}
			if status.Code(err) != grpccodes.Unavailable {
				t.Fatalf("err %v, want UNAVAILABLE", err)
			}
			ms := h.collect()
			want := map[string]string{"grpc.method": method[1:], "grpc.status": "UNAVAILABLE", "iamretry.reason": c.reason}
			if n, ok := sum(t, ms, "iamretry.client.call.gave_up", want); !ok || n != 1 || points(ms, "iamretry.client.call.gave_up") != 1 {
				t.Fatalf("gave_up %v: %d (found %v), want exactly one point of 1: %+v", want, n, ok, ms["iamretry.client.call.gave_up"])
			}
			if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": method[1:], "grpc.status": "UNAVAILABLE"}); n != 1 {
				t.Fatalf("calls that ended UNAVAILABLE: %d, want 1", n)
			}
		})
	}
}

func TestMetricsGaveUpAtTheContextDeadline(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	ctx, cancel := context.WithDeadline(context.Background(), h.clock.Now().Add(2*time.Second))
	defer cancel()
	err := h.call(ctx, &script{errs: fail(grpccodes.Unavailable, 5)}, getPolicy, nil)
	if status.Code(err) != grpccodes.Unavailable {
		t.Fatalf("err %v", err)
	}
	ms := h.collect()
	want := map[string]string{"grpc.method": getPolicyAttr, "grpc.status": "UNAVAILABLE", "iamretry.reason": "context_deadline"}
	if n, _ := sum(t, ms, "iamretry.client.call.gave_up", want); n != 1 {
		t.Fatalf("gave_up %v: %d, want 1: %+v", want, n, ms["iamretry.client.call.gave_up"])
	}
	r := histogram[int64](t, ms, "iamretry.client.call.retries", map[string]string{"grpc.method": getPolicyAttr, "grpc.status": "UNAVAILABLE"})
	if r.Count != 1 || r.Sum != 1 {
		t.Fatalf("retries %+v, want one call with 1 retry", r)
	}
}

// TestMetricsMethodAttribute: the generated IAM methods by name without the
// leading slash, anything else "other" (a name given to Do among them),
// so that the attribute's cardinality stays bounded.
func TestMetricsMethodAttribute(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	for _, method := range []string{"/google.iam.admin.v1.IAM/GetRole", "/my.Service/Get", "/google.iam.admin.v1.IAM/GetRole"} {
		if err := h.call(context.Background(), &script{}, method, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.r.Do(context.Background(), "refresh cache", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := h.r.Do(context.Background(), "google.iam.v1.IAMPolicy/GetIamPolicy", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	ms := h.collect()
	for method, want := range map[string]int64{"google.iam.admin.v1.IAM/GetRole": 2, "other": 2, getPolicyAttr: 1} {
		if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": method}); n != want {
			t.Errorf("calls of %s: %d, want %d", method, n, want)
		}
	}
	if n := points(ms, "iamretry.client.calls"); n != 3 {
		t.Errorf("%d call points, want 3", n)
	}
}

func TestWithMeterProviderNilIsRefused(t *testing.T) {
	t.Parallel()
	_, err := interceptor.New(interceptor.WithMeterProvider(nil))
	if err == nil || !strings.Contains(err.Error(), "WithMeterProvider(nil)") {
		t.Fatalf("err %v, want one naming WithMeterProvider(nil)", err)
	}
}

// TestMetricsSharedByRetriersOfOneProvider: two Retriers given one
// MeterProvider count into the same points (an observable counter keeps one
// observation per attribute set, so separate callbacks would hide each
// other's counts).
func TestMetricsSharedByRetriersOfOneProvider(t *testing.T) {
	t.Parallel()
	m := newMeterReader(t)
	for range 2 {
		h := newHarness(t, m.option())
		if err := h.call(context.Background(), &script{}, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := sum(t, m.collect(), "iamretry.client.calls", map[string]string{"grpc.method": getPolicyAttr}); n != 2 {
		t.Fatalf("calls %d, want 2 (one per Retrier)", n)
	}
}

// TestMetricsRESTSuccessCountedUnderItsMethod: the RoundTripper counts a
// request that succeeds at once under the gRPC method it maps to ("other"
// for one that maps to none), without allocating.
func TestMetricsRESTSuccessCountedUnderItsMethod(t *testing.T) {
	m := newMeterReader(t)
	r, err := interceptor.New(m.option())
	if err != nil {
		t.Fatal(err)
	}
	tr := r.RoundTripper(okBase{&http.Response{StatusCode: 200, Body: http.NoBody}})
	get, _ := http.NewRequest("POST", "https://cloudresourcemanager.googleapis.com/v3/projects/p:getIamPolicy", strings.NewReader(`{}`))
	other, _ := http.NewRequest("GET", "https://example.com/not/iam", nil)
	if n := testing.AllocsPerRun(100, func() { _, _ = tr.RoundTrip(get) }); n != 0 {
		t.Fatalf("REST success path with metrics: %v allocations, want 0", n)
	}
	_, _ = tr.RoundTrip(other)
	ms := m.collect()
	if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": "google.cloud.resourcemanager.v3.Projects/GetIamPolicy"}); n != 101 {
		t.Fatalf("getIamPolicy counted %d times, want 101 (AllocsPerRun's warm-up and 100 runs)", n)
	}
	if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": "other"}); n != 1 {
		t.Fatalf("unmapped request counted %d times, want 1 under other", n)
	}
}
