package interceptor_test

// Performance contract of the interceptor (see BENCHMARKS.md):
//
//   - the success path allocates nothing, with or without call options, with
//     or without our own per-call options, metrics off or on
//     (TestSuccessPathAllocatesNothing, run by `go test`); nor does the REST
//     RoundTripper's (TestRESTSuccessPathAllocatesNothingMetricsOnAndOff);
//   - metrics on add at most 5 ns to a call that succeeds, per-call options
//     at most 1.5 ns (BenchmarkSuccessMetrics/{off,on}/*);
//   - with one gRPC call option present it costs at most half of
//     go-grpc-middleware v2's retry interceptor, with none at most 1.5x
//     (BenchmarkSuccess/{ours,middleware}/{no-opts,one-opt});
//   - over a real gRPC connection it adds at most 3% to a GetIamPolicy call
//     (BenchmarkBufconnGetIamPolicy/{plain,intercepted}).
//
// BenchmarkRetryOnce shows what one retry costs; it is reported, not asserted.

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

const benchMethod = "/google.iam.v1.IAMPolicy/GetIamPolicy"

// The request and reply every direct call passes: real messages, built once,
// so that the benchmarks measure the interceptors and nothing else.
var (
	benchReq   = &iampb.GetIamPolicyRequest{Resource: "projects/p"}
	benchReply = &iampb.Policy{}
)

// noopInvoker stands for the rest of the gRPC stack on a call that succeeds.
func noopInvoker(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
	return nil
}

// callOpts are the call options of each case. The slices are built once, as
// a gRPC client hands the interceptor a slice it already has: building one
// per call would charge the call site's allocation to the interceptor.
func callOpts() []struct {
	name string
	opts []grpc.CallOption
} {
	return []struct {
		name string
		opts []grpc.CallOption
	}{
		{"no-opts", nil},
		// Every GAPIC client passes it on every call.
		{"one-opt", []grpc.CallOption{grpc.MaxCallRecvMsgSize(1 << 20)}},
	}
}

// ours is the Retrier of the benchmarks, configured like middleware below:
// at most 6 attempts, the documented backoff.
func ours(tb testing.TB, opts ...interceptor.Option) grpc.UnaryClientInterceptor {
	tb.Helper()
	r, err := interceptor.New(append([]interceptor.Option{interceptor.WithMaxAttempts(6)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return r.UnaryClientInterceptor()
}

// middleware is go-grpc-middleware v2's retry interceptor configured alike:
// 6 attempts, the transient codes, exponential backoff from 1 s with jitter.
func middleware(backoff retry.BackoffFunc) grpc.UnaryClientInterceptor {
	return retry.UnaryClientInterceptor(
		retry.WithMax(6),
		retry.WithCodes(grpccodes.Unavailable, grpccodes.Internal, grpccodes.DeadlineExceeded),
		retry.WithBackoff(backoff),
	)
}

// BenchmarkSuccess measures one interceptor call whose first attempt
// succeeds, the interceptor called directly with a no-op invoker.
func BenchmarkSuccess(b *testing.B) {
	impls := []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{
		{"ours", ours(b)},
		{"middleware", middleware(retry.BackoffExponentialWithJitter(time.Second, 0.1))},
	}
	ctx := context.Background()
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			for _, c := range callOpts() {
				b.Run(c.name, func(b *testing.B) {
					ic, opts := impl.ic, c.opts
					b.ReportAllocs()
					for b.Loop() {
						if err := ic(ctx, benchMethod, benchReq, benchReply, nil, noopInvoker, opts...); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// sdkProvider is an OpenTelemetry SDK MeterProvider with a ManualReader,
// shut down by tb's cleanup.
func sdkProvider(tb testing.TB) *sdkmetric.MeterProvider {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tb.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp
}

// BenchmarkSuccessMetrics is BenchmarkSuccess/ours with the instruments on
// (an SDK MeterProvider) and with per-call overrides: the success path
// stays at 0 allocs/op (one atomic add with metrics; one scan of the call
// options with overrides).
func BenchmarkSuccessMetrics(b *testing.B) {
	impls := []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{
		{"off", ours(b)},
		{"on", ours(b, interceptor.WithMeterProvider(sdkProvider(b)))},
	}
	ctx := context.Background()
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			for _, c := range overrideCases() {
				b.Run(c.name, func(b *testing.B) {
					ic, opts := impl.ic, c.opts
					b.ReportAllocs()
					for b.Loop() {
						if err := ic(ctx, benchMethod, benchReq, benchReply, nil, noopInvoker, opts...); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// overrideCases are callOpts and the per-call overrides of this package on
// top of one-opt: one-opt+overrides is compared with one-opt (the same call
// without them). one-opt+per-attempt is reported only: a per-attempt
// timeout is a context and a timer per attempt, by design.
func overrideCases() []struct {
	name string
	opts []grpc.CallOption
} {
	recv := grpc.MaxCallRecvMsgSize(1 << 20)
	return append(callOpts(), []struct {
		name string
		opts []grpc.CallOption
	}{
		{"one-opt+overrides", []grpc.CallOption{recv, interceptor.CallDeadline(5 * time.Minute), interceptor.CallMaxAttempts(3)}},
		{"one-opt+all-ours", []grpc.CallOption{recv, interceptor.CallDeadline(5 * time.Minute), interceptor.CallMaxAttempts(3),
			interceptor.CallPerAttemptTimeout(0), interceptor.RetryNotFound(), interceptor.Disable()}},
		{"one-opt+per-attempt", []grpc.CallOption{recv, interceptor.CallPerAttemptTimeout(10 * time.Second)}},
	}...)
}

// BenchmarkRESTSuccessMetrics is BenchmarkRESTSuccess with the instruments
// off and on: a request that succeeds at once, through the RoundTripper
// around a base that answers 200 with one shared response (bare: the base
// alone). With metrics on, the request is mapped to its gRPC method and
// counted.
func BenchmarkRESTSuccessMetrics(b *testing.B) {
	base := okBase{&http.Response{StatusCode: 200, Body: http.NoBody}}
	off, err := interceptor.New()
	if err != nil {
		b.Fatal(err)
	}
	on, err := interceptor.New(interceptor.WithMeterProvider(sdkProvider(b)))
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "https://cloudresourcemanager.googleapis.com/v3/projects/p:getIamPolicy", strings.NewReader(`{}`))
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"bare", base}, {"off", off.RoundTripper(base)}, {"on", on.RoundTripper(base)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if resp, err := c.rt.RoundTrip(req); err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
			}
		})
	}
}

// TestRESTSuccessPathAllocatesNothingMetricsOnAndOff: a request that
// succeeds at once costs the RoundTripper no allocation, metrics off or on,
// whatever its host's case and path's length (metrics map each one).
func TestRESTSuccessPathAllocatesNothingMetricsOnAndOff(t *testing.T) {
	base := okBase{&http.Response{StatusCode: 200, Body: http.NoBody}}
	urls := []string{
		"https://cloudresourcemanager.googleapis.com/v3/projects/p:getIamPolicy",
		"https://CloudResourceManager.GoogleAPIs.com:443/v3/projects/p:getIamPolicy",
		"https://cloudkms.googleapis.com/v1/" + strings.Repeat("x/", 20) + "k:getIamPolicy",
		"https://example.com/" + strings.Repeat("x/", 40) + "y",
	}
	for _, mode := range []string{"off", "on"} {
		opts := []interceptor.Option{}
		if mode == "on" {
			opts = append(opts, interceptor.WithMeterProvider(sdkProvider(t)))
		}
		r, err := interceptor.New(opts...)
		if err != nil {
			t.Fatal(err)
		}
		tr := r.RoundTripper(base)
		for _, u := range urls {
			req, err := http.NewRequest("POST", u, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			if n := testing.AllocsPerRun(100, func() { _, _ = tr.RoundTrip(req) }); n != 0 {
				t.Errorf("metrics %s, POST %s: %v allocations, want 0", mode, u, n)
			}
		}
	}
}

// BenchmarkRetryOnceMetrics is BenchmarkRetryOnce/ours with the instruments
// on: a retried call records through pre-built attribute options.
func BenchmarkRetryOnceMetrics(b *testing.B) {
	unavailable := status.Error(grpccodes.Unavailable, "unavailable")
	failNext := false
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		failNext = !failNext
		if failNext {
			return unavailable
		}
		return nil
	}
	clk := vclock.New()
	ic := ours(b, interceptor.WithClock(clk), interceptor.WithMeterProvider(sdkProvider(b)))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := ic(ctx, benchMethod, benchReq, benchReply, nil, invoker); err != nil {
			b.Fatal(err)
		}
		if i++; i&4095 == 0 {
			clk.Reset()
		}
	}
	clk.Reset()
}

// TestSuccessPathAllocatesNothing locks in the promise of the package doc:
// a call that succeeds at once costs no allocation, whatever call options it
// carries, our own included.
func TestSuccessPathAllocatesNothing(t *testing.T) {
	recv := grpc.MaxCallRecvMsgSize(1 << 20)
	cases := []struct {
		name string
		opts []grpc.CallOption
	}{
		{"no-opts", nil},
		{"one-opt", []grpc.CallOption{recv}},
		{"Disable", []grpc.CallOption{interceptor.Disable()}},
		{"RetryNotFound", []grpc.CallOption{interceptor.RetryNotFound()}},
		{"one-opt+Disable", []grpc.CallOption{recv, interceptor.Disable()}},
		{"one-opt+RetryNotFound", []grpc.CallOption{recv, interceptor.RetryNotFound()}},
		{"all", []grpc.CallOption{recv, grpc.WaitForReady(true), interceptor.RetryNotFound(), interceptor.Disable()}},
		{"CallDeadline", []grpc.CallOption{interceptor.CallDeadline(5 * time.Minute)}},
		{"one-opt+overrides", []grpc.CallOption{recv, interceptor.CallDeadline(5 * time.Minute), interceptor.CallMaxAttempts(3)}},
		{"CallMaxAttempts", []grpc.CallOption{interceptor.CallMaxAttempts(1)}},
		{"CallPerAttemptTimeout(0)", []grpc.CallOption{interceptor.CallPerAttemptTimeout(0)}},
		{"one-opt+all-ours", []grpc.CallOption{recv, interceptor.CallDeadline(5 * time.Minute), interceptor.CallMaxAttempts(3),
			interceptor.CallPerAttemptTimeout(0), interceptor.RetryNotFound(), interceptor.Disable()}},
	}
	retriers := []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{
		{"default", interceptor.UnaryClientInterceptor()},
		{"configured", ours(t,
			interceptor.WithDeadline(2*time.Minute),
			interceptor.WithRetryNotFound(),
			interceptor.WithClock(vclock.New()),
			interceptor.WithObserver(func(context.Context, interceptor.Attempt) {}),
		)},
		{"metrics", ours(t, interceptor.WithMeterProvider(sdkProvider(t)))},
	}
	ctx := context.Background()
	for _, r := range retriers {
		for _, c := range cases {
			t.Run(r.name+"/"+c.name, func(t *testing.T) {
				calls, gotOpts := 0, -1
				invoker := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
					calls++
					gotOpts = len(opts)
					return nil
				}
				ic, opts := r.ic, c.opts
				allocs := testing.AllocsPerRun(1000, func() {
					if err := ic(ctx, benchMethod, benchReq, benchReply, nil, invoker, opts...); err != nil {
						t.Fatal(err)
					}
				})
				if calls == 0 || gotOpts != len(c.opts) {
					t.Fatalf("invoker called %d times with %d call options, want >0 calls with %d", calls, gotOpts, len(c.opts))
				}
				if allocs != 0 {
					t.Errorf("a call that succeeds at once made %v allocations, want 0", allocs)
				}
			})
		}
	}
}

// BenchmarkRetryOnce measures a call whose first attempt fails UNAVAILABLE
// and whose second succeeds: the cost of one retry. Our Retrier runs on a
// virtual clock, whose Sleep returns at once; middleware's backoff is 0 (its
// waits are real timers), so neither waits. Reported, not asserted.
func BenchmarkRetryOnce(b *testing.B) {
	unavailable := status.Error(grpccodes.Unavailable, "unavailable")
	failNext := false
	// Fails every other call: the first attempt of each call, single-threaded.
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		failNext = !failNext
		if failNext {
			return unavailable
		}
		return nil
	}
	clk := vclock.New()
	impls := []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{
		{"ours", ours(b, interceptor.WithClock(clk))},
		{"middleware", middleware(func(context.Context, uint) time.Duration { return 0 })},
	}
	ctx := context.Background()
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			for _, c := range callOpts() {
				b.Run(c.name, func(b *testing.B) {
					ic, opts := impl.ic, c.opts
					failNext = false
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						if err := ic(ctx, benchMethod, benchReq, benchReply, nil, invoker, opts...); err != nil {
							b.Fatal(err)
						}
						// The virtual clock records every wait; forget them
						// now and then so that its record stays small.
						if i++; i&4095 == 0 {
							clk.Reset()
						}
					}
					// Every first attempt failed, so every call that returned
					// nil was retried once.
					clk.Reset()
				})
			}
		})
	}
}

// iamServer is a minimal google.iam.v1.IAMPolicy server: GetIamPolicy
// returns a small fixed policy.
type iamServer struct {
	iampb.UnimplementedIAMPolicyServer
	policy *iampb.Policy
}

func (s *iamServer) GetIamPolicy(context.Context, *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return s.policy, nil
}

// bufconnClient serves iamServer over bufconn and returns a client of it
// whose connection carries dialOpts. The server and the connection are
// closed by tb's cleanup.
func bufconnClient(tb testing.TB, dialOpts ...grpc.DialOption) iampb.IAMPolicyClient {
	tb.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	iampb.RegisterIAMPolicyServer(srv, &iamServer{policy: &iampb.Policy{
		Version: 1,
		Etag:    []byte("BwYz1Qm9Zk0="),
		Bindings: []*iampb.Binding{
			{Role: "roles/viewer", Members: []string{"user:alice@example.com", "group:eng@example.com"}},
			{Role: "roles/editor", Members: []string{"serviceAccount:ci@p.iam.gserviceaccount.com"}},
		},
	}})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(lis)
	}()
	tb.Cleanup(func() {
		srv.Stop()
		<-served
	})
	opts := append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, dialOpts...)
	conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = conn.Close() }) // runs before the server's Stop
	return iampb.NewIAMPolicyClient(conn)
}

// BenchmarkBufconnGetIamPolicy measures a whole GetIamPolicy call over a real
// gRPC connection (in-memory transport, real HTTP/2 framing and protobuf
// encoding, a real server), without and with our interceptor. Each call
// carries grpc.MaxCallRecvMsgSize, as GAPIC clients' calls do.
func BenchmarkBufconnGetIamPolicy(b *testing.B) {
	cases := []struct {
		name     string
		dialOpts []grpc.DialOption
	}{
		{"plain", nil},
		{"intercepted", []grpc.DialOption{grpc.WithChainUnaryInterceptor(ours(b))}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			client := bufconnClient(b, c.dialOpts...)
			ctx := context.Background()
			req := &iampb.GetIamPolicyRequest{Resource: "projects/p"}
			recv := grpc.MaxCallRecvMsgSize(1 << 20)
			// Connect and warm up outside the timed loop.
			for range 100 {
				if _, err := client.GetIamPolicy(ctx, req, recv); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.GetIamPolicy(ctx, req, recv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSuccessParallel is BenchmarkSuccess/*/one-opt from every core at
// once: one Retrier (and its retry budget) shared by all calls, as in a
// server. A healthy budget is full, so each call's deposit is a read that
// writes no shared memory.
func BenchmarkSuccessParallel(b *testing.B) {
	for _, impl := range []struct {
		name string
		ic   grpc.UnaryClientInterceptor
	}{
		{"ours", ours(b)},
		{"middleware", middleware(retry.BackoffExponentialWithJitter(time.Second, 0.1))},
	} {
		b.Run(impl.name, func(b *testing.B) {
			opts := []grpc.CallOption{grpc.MaxCallRecvMsgSize(1 << 20)}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if err := impl.ic(ctx, benchMethod, benchReq, benchReply, nil, noopInvoker, opts...); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// uploadSize is the body of BenchmarkRESTUnreplayableUpload: 64 MiB.
const uploadSize = 64 << 20

// zeros is an upload body of n zero bytes that allocates nothing as it is
// read, of a type http.NewRequest does not know (no GetBody).
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > z.n {
		k = z.n
	}
	clear(p[:k])
	z.n -= k
	return int(k), nil
}

// drainBase reads each request's body to the end, as a transport sending
// it would, and answers with one shared response.
type drainBase struct{ resp *http.Response }

func (d drainBase) RoundTrip(req *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, req.Body)
	_ = req.Body.Close()
	return d.resp, nil
}

// uploadTransports are the transports BenchmarkRESTUnreplayableUpload
// compares: the base alone, and the RoundTripper around it.
func uploadTransports(tb testing.TB) []struct {
	name string
	rt   http.RoundTripper
} {
	base := drainBase{&http.Response{StatusCode: 200, Body: http.NoBody}}
	r, err := interceptor.New()
	if err != nil {
		tb.Fatal(err)
	}
	return []struct {
		name string
		rt   http.RoundTripper
	}{{"bare", base}, {"ours", r.RoundTripper(base)}}
}

// BenchmarkRESTUnreplayableUpload: a 64 MiB POST to a URL of no IAM method
// (unsafe to send again, so never replayed) with a body without GetBody,
// through the base alone and through the RoundTripper: the RoundTripper
// streams it (issue 19 item 3; it used to buffer it, 157 MiB per upload).
func BenchmarkRESTUnreplayableUpload(b *testing.B) {
	for _, c := range uploadTransports(b) {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(uploadSize)
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("POST", "https://upload.example.com/v1/objects", &zeros{n: uploadSize})
				if resp, err := c.rt.RoundTrip(req); err != nil || resp.StatusCode != 200 {
					b.Fatal(resp, err)
				}
			}
		})
	}
}

// TestRESTUnreplayableUploadAllocatesUnder1MiB enforces what
// BenchmarkRESTUnreplayableUpload shows: the RoundTripper allocates less
// than 1 MiB per 64 MiB unreplayable upload beyond the bare transport.
func TestRESTUnreplayableUploadAllocatesUnder1MiB(t *testing.T) {
	var bytes [2]uint64
	for i, c := range uploadTransports(t) {
		var before, after runtime.MemStats
		const runs = 3
		runtime.ReadMemStats(&before)
		for range runs {
			req, _ := http.NewRequest("POST", "https://upload.example.com/v1/objects", &zeros{n: uploadSize})
			if resp, err := c.rt.RoundTrip(req); err != nil || resp.StatusCode != 200 {
				t.Fatal(resp, err)
			}
		}
		runtime.ReadMemStats(&after)
		bytes[i] = (after.TotalAlloc - before.TotalAlloc) / runs
	}
	if extra := int64(bytes[1]) - int64(bytes[0]); extra >= 1<<20 {
		t.Fatalf("the RoundTripper allocated %d B per 64 MiB upload beyond the bare transport's %d B; want < 1 MiB", extra, bytes[0])
	}
}
