package interceptor_test

// The stacked-layers detector: a layer above the interceptor that retries a
// call the Retrier already retried and gave up on is reported once per
// method (Warn), with a span event and a counter per stacked retry.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"net/http"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// stackWatch is what the detector reports through: a logger, a meter and
// a tracer.
type stackWatch struct {
	mu     sync.Mutex
	warns  []string
	reader *sdkmetric.ManualReader
	exp    *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
}

func newStackWatch(t *testing.T) (*stackWatch, []interceptor.Option) {
	w := &stackWatch{reader: sdkmetric.NewManualReader(), exp: tracetest.NewInMemoryExporter()}
	w.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(w.exp))
	t.Cleanup(func() { _ = w.tp.Shutdown(context.Background()) })
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(w.reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return w, []interceptor.Option{
		interceptor.WithMeterProvider(mp),
		interceptor.WithLogger(logging.LoggerFunc(func(_ context.Context, l logging.Level, msg string, _ ...any) {
			if l == logging.LevelWarn && strings.Contains(msg, "layer above") {
				w.mu.Lock()
				w.warns = append(w.warns, msg)
				w.mu.Unlock()
			}
		})),
	}
}

// stacked returns the iamretry.client.call.stacked count of method.
func (w *stackWatch) stacked(t *testing.T, method string) int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := w.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "iamretry.client.call.stacked" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := p.Attributes.Value("grpc.method"); v.AsString() == method {
					n += p.Value
				}
			}
		}
	}
	return n
}

func (w *stackWatch) warnCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.warns)
}

// spanEvents runs f under a recording span and counts its iamretry.stacked events.
func (w *stackWatch) spanEvents(t *testing.T, f func(ctx context.Context)) int {
	t.Helper()
	w.exp.Reset()
	ctx, span := w.tp.Tracer("test").Start(context.Background(), "call")
	f(ctx)
	span.End()
	n := 0
	for _, s := range w.exp.GetSpans() {
		for _, e := range s.Events {
			if e.Name == "iamretry.stacked" {
				n++
			}
		}
	}
	return n
}

// nRetryer is a gax retryer that retries UNAVAILABLE at once, n-1 times:
// gax's own retries, deterministic and without real waits.
type nRetryer struct{ left int }

func (r *nRetryer) Retry(err error) (time.Duration, bool) {
	r.left--
	return time.Millisecond, r.left > 0
}

func gaxRetries(n int) gax.CallOption {
	return gax.WithRetry(func() gax.Retryer { return &nRetryer{left: n} })
}

const getSAMethod = "google.iam.admin.v1.IAM/GetServiceAccount"

// TestStackedGAXRetriesReported: an admin client wired by hand without
// DisableGAXRetries, during an outage: gax's 3 tries each run the
// Retrier's schedule of 3 (9 server calls); the 2 stacked retries are
// counted and get span events, and one Warn names the fix.
func TestStackedGAXRetriesReported(t *testing.T) {
	t.Parallel()
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(append(wopts, interceptor.WithMaxAttempts(3))...))
	ctx := context.Background()
	c, err := admin.NewIamClient(ctx, append(g.fake.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(g.retrier.UnaryClientInterceptor())))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CallOptions.GetServiceAccount = append(c.CallOptions.GetServiceAccount, gaxRetries(3))
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	events := w.spanEvents(t, func(ctx context.Context) {
		_, _ = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
	})
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != 9 {
		t.Fatalf("%d server calls, want 9 (3 gax tries x 3 attempts)", n)
	}
	if n := w.stacked(t, getSAMethod); n != 2 {
		t.Fatalf("stacked counter %d, want 2", n)
	}
	if events != 2 {
		t.Fatalf("%d iamretry.stacked span events, want 2", events)
	}
	// A second stacked call of the same method: counted, not logged again.
	_, _ = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
	if n := w.warnCount(); n != 1 {
		t.Fatalf("%d Warns, want 1 (once per method per Retrier)", n)
	}
	if msg := w.warns[0]; !strings.Contains(msg, "NewClient") || !strings.Contains(msg, "DisableGAXRetries") {
		t.Fatalf("Warn %q does not name NewClient and DisableGAXRetries", msg)
	}
	if n := w.stacked(t, getSAMethod); n != 4 {
		t.Fatalf("stacked counter %d, want 4", n)
	}
}

// TestStackedNotReportedWhenWired: the same outage through NewClient's
// client: one schedule, no report.
func TestStackedNotReportedWhenWired(t *testing.T) {
	t.Parallel()
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(append(wopts, interceptor.WithMaxAttempts(3))...))
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	for range 3 {
		events := w.spanEvents(t, func(ctx context.Context) {
			_, _ = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
		})
		if events != 0 {
			t.Fatalf("%d iamretry.stacked events on a wired client", events)
		}
	}
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != 9 {
		t.Fatalf("%d server calls, want 3 calls x 3 attempts", n)
	}
	if n := w.stacked(t, getSAMethod); n != 0 || w.warnCount() != 0 {
		t.Fatalf("stacked %d, %d Warns on a wired client; want none", n, w.warnCount())
	}
}

// TestStackedOwnLoop: a retry loop of the caller's own over NewClient's
// client. The same request value again at once is stacking; the same
// request value minutes later is a separate call; other requests under one
// shared context are separate calls; the same context with a request of
// the same content is stacking.
func TestStackedOwnLoop(t *testing.T) {
	t.Parallel()
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(append(wopts, interceptor.WithMaxAttempts(2))...))
	c, err := interceptor.NewClient(context.Background(), g.retrier, iamapi.NewIamPolicyClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const method = "google.iam.v1.IAMPolicy/GetIamPolicy"
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	get := func(ctx context.Context, req *iampb.GetIamPolicyRequest) { _, _ = c.GetIamPolicy(ctx, req) }

	// Same request value, fresh contexts, minutes apart: not stacking.
	req := &iampb.GetIamPolicyRequest{Resource: "projects/p1"}
	get(context.WithValue(context.Background(), struct{}{}, 1), req)
	g.clock.Advance(3 * time.Minute)
	get(context.WithValue(context.Background(), struct{}{}, 2), req)
	if n := w.stacked(t, method); n != 0 {
		t.Fatalf("a request reused minutes apart: stacked %d, want 0", n)
	}
	g.clock.Advance(3 * time.Minute)

	// Other resources under one shared context: not stacking.
	shared, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, res := range []string{"projects/a1", "projects/a2", "projects/a3"} {
		get(shared, &iampb.GetIamPolicyRequest{Resource: res})
	}
	if n := w.stacked(t, method); n != 0 {
		t.Fatalf("a loop over resources under one context: stacked %d, want 0", n)
	}
	g.clock.Advance(3 * time.Minute)

	// The same request value again at once, under a fresh context: stacking.
	get(context.WithValue(context.Background(), struct{}{}, 3), req)
	get(context.WithValue(context.Background(), struct{}{}, 4), req)
	if n := w.stacked(t, method); n != 1 {
		t.Fatalf("the same request retried at once: stacked %d, want 1", n)
	}
	g.clock.Advance(3 * time.Minute)

	// The same context, a new request of the same content: stacking. (A
	// GAPIC client gives each call a context of its own, so this is a
	// loop over the raw stub on the client's connection.)
	raw := iampb.NewIAMPolicyClient(c.Connection())
	_, _ = raw.GetIamPolicy(shared, &iampb.GetIamPolicyRequest{Resource: "projects/b1"})
	_, _ = raw.GetIamPolicy(shared, &iampb.GetIamPolicyRequest{Resource: "projects/b1"})
	if n := w.stacked(t, method); n != 2 {
		t.Fatalf("the same context and request content: stacked %d, want 2", n)
	}
	if w.warnCount() != 1 {
		t.Fatalf("%d Warns, want 1", w.warnCount())
	}
}

// TestStackedREST: a GAPIC REST client wired by hand (the RoundTripper in
// its HTTP client) without DisableGAXRetries: GAPIC builds a new request
// per gax try, so the context is what matches.
func TestStackedREST(t *testing.T) {
	t.Parallel()
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(append(wopts, interceptor.WithMaxAttempts(2))...))
	ctx := context.Background()
	hc := &http.Client{Transport: g.retrier.RoundTripper(g.fake.HTTPClient().Transport)}
	c, err := iamapi.NewIamPolicyRESTClient(ctx, append(g.fake.RESTClientOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.CallOptions.GetIamPolicy = append(c.CallOptions.GetIamPolicy, gaxRetries(3))
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	// A context of the caller's own: context.Background carries no
	// identity to match.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, _ = c.GetIamPolicy(cctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != 6 {
		t.Fatalf("%d server calls, want 6 (3 gax tries x 2 attempts)", n)
	}
	total := int64(0)
	var rm metricdata.ResourceMetrics
	if err := w.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "iamretry.client.call.stacked" {
				for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
					total += p.Value
				}
			}
		}
	}
	if total != 2 || w.warnCount() != 1 {
		t.Fatalf("stacked %d, %d Warns; want 2 and 1", total, w.warnCount())
	}
}
