package interceptor_test

// The shared rig of the end-to-end tests: the public fake IAM server and a
// Retrier on one virtual clock, and the gRPC and REST clients the Retrier is
// added to, built on demand.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam"
	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	gax "github.com/googleapis/gax-go/v2"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// halfRandom is every rig's random source: with r = 0.5 the documented
// jitter adds exactly half a second, so the waits are exactly
// min(2^n + 0.5, 32) s: 1.5, 2.5, 4.5, 8.5, 16.5, 32, 32, ...
func halfRandom() float64 { return 0.5 }

// rig is the one end-to-end setup of this package: the public fake
// (iamtest, over bufconn, reading the rig's virtual clock so its call log is
// timed in virtual time) and a Retrier on the same clock with r = 0.5 and an
// observer that records every Attempt. The clients the interceptor is added
// to are built on demand (rigOption): withGRPC, withREST. Everything is
// closed in t.Cleanup.
type rig struct {
	fake    *iamtest.Server
	clock   *vclock.Clock
	latency *rigLatency // how the fake waits its latency; nil with fakeOnVirtualClock
	retrier *interceptor.Retrier

	// withGRPC: three kinds of clients with the Retrier's interceptor as a
	// dial option: the admin client, the iam/apiv1 IamPolicyClient (both with
	// gax's own retries turned off, so that only the interceptor retries and
	// no test waits on gax's real timers) and a raw connection with its
	// generated google.iam.v1.IAMPolicy stub; sa is a service account created
	// through admin, whose name is the resource the policy tests use.
	admin  *admin.IamClient
	policy *iamapi.IamPolicyClient
	conn   *grpc.ClientConn
	raw    iampb.IAMPolicyClient
	sa     *adminpb.ServiceAccount

	// withREST: the fake's REST face over httptest and the four REST clients
	// with the RoundTripper in their *http.Client (GAPIC ones with gax's
	// retries off); restSA is a service account created through iam, named
	// projects/p1/serviceAccounts/robot-main@p1.iam.gserviceaccount.com.
	restSrv    *httptest.Server
	iam        *iamv1.Service
	crm        *crm.Service
	restPolicy *iamapi.IamPolicyClient
	project    *resourcemanager.ProjectsClient
	restSA     string

	failuresOnly bool // the observer keeps only the attempts that did not succeed

	mu       sync.Mutex
	attempts []interceptor.Attempt
}

// rigOption says what a rig holds beyond the fake and the Retrier.
type rigOption func(*rigConfig)

type rigConfig struct {
	retrier      []interceptor.Option
	setup        func(*iamtest.Server)
	grpc, rest   bool
	wrap         func(http.Handler) http.Handler
	virtual      bool
	failuresOnly bool
}

// withRetrier adds opts to the Retrier's, on top of the rig's own (virtual
// clock, r = 0.5, the recording observer), in the order given.
func withRetrier(opts ...interceptor.Option) rigOption {
	return func(c *rigConfig) { c.retrier = append(c.retrier, opts...) }
}

// readmeDeadline gives the Retrier a 2 min retry deadline, as the README's
// first snippet.
func readmeDeadline() rigOption { return withRetrier(interceptor.WithDeadline(2 * time.Minute)) }

// withFake runs setup on the fake before anything else reaches it.
func withFake(setup func(*iamtest.Server)) rigOption {
	return func(c *rigConfig) { c.setup = setup }
}

// withGRPC builds the gRPC clients and the service account sa, and then
// resets the rig's records.
func withGRPC() rigOption { return func(c *rigConfig) { c.grpc = true } }

// withREST serves the fake's REST face over httptest, wrapped by wrap when
// it is not nil, builds the REST clients and the service account restSA,
// and then resets the rig's records.
func withREST(wrap func(http.Handler) http.Handler) rigOption {
	return func(c *rigConfig) { c.rest, c.wrap = true, wrap }
}

// fakeOnVirtualClock makes the fake wait its latency on the virtual clock
// itself; without it the fake reads the virtual time and waits on real
// timers, or through setSleep.
func fakeOnVirtualClock() rigOption { return func(c *rigConfig) { c.virtual = true } }

// failedAttemptsOnly makes the observer keep only the attempts that did not
// succeed (not the final Succeeded reports).
func failedAttemptsOnly() rigOption { return func(c *rigConfig) { c.failuresOnly = true } }

// newRig builds a rig with opts.
func newRig(t testing.TB, opts ...rigOption) *rig {
	t.Helper()
	var cfg rigConfig
	for _, o := range opts {
		o(&cfg)
	}
	ctx := context.Background()
	g := &rig{clock: vclock.New(), failuresOnly: cfg.failuresOnly}

	// NewServer's cleanup is registered first, so it runs last (cleanups
	// run last-in first-out): after the clients close.
	if cfg.virtual {
		g.fake = iamtest.NewServer(t, iamtest.WithClock(g.clock))
	} else {
		g.latency = &rigLatency{now: g.clock.Now}
		g.fake = iamtest.NewServer(t, iamtest.WithClock(g.latency))
	}
	if cfg.setup != nil {
		cfg.setup(g.fake)
	}

	ropts := append([]interceptor.Option{
		interceptor.WithClock(g.clock),
		interceptor.WithRandom(halfRandom),
		interceptor.WithObserver(g.record),
	}, cfg.retrier...)
	r, err := interceptor.New(ropts...)
	if err != nil {
		t.Fatalf("interceptor.New: %v", err)
	}
	g.retrier = r
	if cfg.grpc {
		g.dialGRPC(ctx, t)
	}
	if cfg.rest {
		g.dialREST(ctx, t, cfg.wrap)
	}
	return g
}

// dialGRPC builds the gRPC clients and sa.
func (g *rig) dialGRPC(ctx context.Context, t testing.TB) {
	t.Helper()
	dial := grpc.WithChainUnaryInterceptor(g.retrier.UnaryClientInterceptor())
	clientOpts := append(slices.Clip(g.fake.ClientOptions()), option.WithGRPCDialOption(dial))

	var err error
	g.admin, err = admin.NewIamClient(ctx, clientOpts...)
	if err != nil {
		t.Fatalf("admin.NewIamClient: %v", err)
	}
	t.Cleanup(func() { g.admin.Close() })
	if err := interceptor.DisableGAXRetries(g.admin.CallOptions); err != nil {
		t.Fatalf("DisableGAXRetries(admin): %v", err)
	}

	g.policy, err = iamapi.NewIamPolicyClient(ctx, clientOpts...)
	if err != nil {
		t.Fatalf("iamapi.NewIamPolicyClient: %v", err)
	}
	t.Cleanup(func() { g.policy.Close() })
	if err := interceptor.DisableGAXRetries(g.policy.CallOptions); err != nil {
		t.Fatalf("DisableGAXRetries(policy): %v", err)
	}

	g.conn, err = g.fake.Dial(ctx, dial)
	if err != nil {
		t.Fatalf("fake.Dial: %v", err)
	}
	t.Cleanup(func() { g.conn.Close() })
	g.raw = iampb.NewIAMPolicyClient(g.conn)

	g.sa = g.createAccount(t, "robot-main")
}

// dialREST serves the REST face, builds the REST clients and restSA.
func (g *rig) dialREST(ctx context.Context, t testing.TB, wrap func(http.Handler) http.Handler) {
	t.Helper()
	var h http.Handler = g.fake.RESTHandler()
	if wrap != nil {
		h = wrap(h)
	}
	g.restSrv = httptest.NewServer(h)
	t.Cleanup(g.restSrv.Close)
	hc := &http.Client{Transport: g.retrier.RoundTripper(g.restSrv.Client().Transport)}
	copts := []option.ClientOption{option.WithEndpoint(g.restSrv.URL + "/"), option.WithHTTPClient(hc)}
	var err error
	if g.iam, err = iamv1.NewService(ctx, copts...); err != nil {
		t.Fatal(err)
	}
	if g.crm, err = crm.NewService(ctx, copts...); err != nil {
		t.Fatal(err)
	}
	if g.restPolicy, err = iamapi.NewIamPolicyRESTClient(ctx, copts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.restPolicy.Close() })
	if err := interceptor.DisableGAXRetries(g.restPolicy.CallOptions); err != nil {
		t.Fatal(err)
	}
	if g.project, err = resourcemanager.NewProjectsRESTClient(ctx, copts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.project.Close() })
	if err := interceptor.DisableGAXRetries(g.project.CallOptions); err != nil {
		t.Fatal(err)
	}
	sa, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "robot-main"}).Do()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	g.restSA = sa.Name
	g.reset()
}

// record is the rig's observer: it keeps every attempt, or with
// failedAttemptsOnly the failed ones only.
func (g *rig) record(_ context.Context, a interceptor.Attempt) {
	if g.failuresOnly && a.Reason == interceptor.Succeeded {
		return
	}
	g.mu.Lock()
	g.attempts = append(g.attempts, a)
	g.mu.Unlock()
}

// Attempts returns a copy of the attempts observed so far.
func (g *rig) Attempts() []interceptor.Attempt {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.attempts)
}

// takeAttempts returns the attempts observed so far and forgets them.
func (g *rig) takeAttempts() []interceptor.Attempt {
	g.mu.Lock()
	defer g.mu.Unlock()
	as := g.attempts
	g.attempts = nil
	return as
}

// reset forgets the call log, the recorded sleeps and the observed attempts
// (the stored data, the faults and the time stay).
func (g *rig) reset() {
	g.fake.ResetCalls()
	g.clock.Reset()
	g.mu.Lock()
	g.attempts = nil
	g.mu.Unlock()
}

// createAccount creates a service account in project p1 and then resets the
// rig's records.
func (g *rig) createAccount(t testing.TB, id string) *adminpb.ServiceAccount {
	t.Helper()
	sa, err := g.admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
		Name: "projects/p1", AccountId: id,
	})
	if err != nil {
		t.Fatalf("CreateServiceAccount(%s): %v", id, err)
	}
	g.reset()
	return sa
}

// callsOf returns the logged calls of method, in order.
func (g *rig) callsOf(method iamtest.Method) []iamtest.Call {
	var out []iamtest.Call
	for _, c := range g.fake.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// e2eKind is one kind of client the interceptor is plugged into, with the
// operations the scenarios need. Every operation goes through the kind's own
// client, so through the interceptor.
type e2eKind struct {
	name string
	// readMethod is the method read calls, as the fake logs it.
	readMethod iamtest.Method
	// read makes one safe read of the rig's service account (the account
	// itself through the admin client, its policy through the others),
	// passing opts as gRPC call options: through gax.WithGRPCOptions on a
	// GAPIC client, as they are on the raw stub.
	read func(ctx context.Context, g *rig, opts ...grpc.CallOption) error
	// setMethod is the method set calls, as the fake logs it.
	setMethod iamtest.Method
	// get reads the policy of resource.
	get func(ctx context.Context, g *rig, resource string) (*iampb.Policy, error)
	// set writes p as the policy of resource (with whatever etag p carries).
	set func(ctx context.Context, g *rig, resource string, p *iampb.Policy) (*iampb.Policy, error)
}

// e2eKinds are the three kinds of clients.
var e2eKinds = []e2eKind{
	{
		name:       "admin.IamClient",
		readMethod: iamtest.MethodGetServiceAccount,
		read: func(ctx context.Context, g *rig, opts ...grpc.CallOption) error {
			_, err := g.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: g.sa.Name}, gax.WithGRPCOptions(opts...))
			return err
		},
		setMethod: iamtest.MethodAdminSetIamPolicy,
		// The admin client's policy methods are hand-written around
		// iam.Policy and take no call options.
		get: func(ctx context.Context, g *rig, resource string) (*iampb.Policy, error) {
			p, err := g.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
			if err != nil {
				return nil, err
			}
			return p.InternalProto, nil
		},
		set: func(ctx context.Context, g *rig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
			got, err := g.admin.SetIamPolicy(ctx, &admin.SetIamPolicyRequest{Resource: resource, Policy: &iam.Policy{InternalProto: p}})
			if err != nil {
				return nil, err
			}
			return got.InternalProto, nil
		},
	},
	{
		name:       "iamapi.IamPolicyClient",
		readMethod: iamtest.MethodGetIamPolicy,
		read: func(ctx context.Context, g *rig, opts ...grpc.CallOption) error {
			_, err := g.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: g.sa.Name}, gax.WithGRPCOptions(opts...))
			return err
		},
		setMethod: iamtest.MethodSetIamPolicy,
		get: func(ctx context.Context, g *rig, resource string) (*iampb.Policy, error) {
			return g.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
		},
		set: func(ctx context.Context, g *rig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
			return g.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
		},
	},
	{
		name:       "grpc.ClientConn",
		readMethod: iamtest.MethodGetIamPolicy,
		read: func(ctx context.Context, g *rig, opts ...grpc.CallOption) error {
			_, err := g.raw.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: g.sa.Name}, opts...)
			return err
		},
		setMethod: iamtest.MethodSetIamPolicy,
		get: func(ctx context.Context, g *rig, resource string) (*iampb.Policy, error) {
			return g.raw.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
		},
		set: func(ctx context.Context, g *rig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
			return g.raw.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
		},
	},
}

// secs turns seconds into durations.
func secs(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// wantCode fails t unless err has the gRPC code want.
func wantCode(t testing.TB, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("error %v has code %v, want %v", err, got, want)
	}
}

// wantInjected fails t unless err is the fault the fake injected, code want,
// with its message unchanged: the server's error as it was sent.
func wantInjected(t testing.TB, err error, want codes.Code) {
	t.Helper()
	wantCode(t, err, want)
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, injectedPrefix) {
		t.Fatalf("error message %q is not the fake's injected one (prefix %q)", msg, injectedPrefix)
	}
}

// wantLog fails t unless the fake logged exactly len(codes) calls of method,
// the i-th answered codes[i] and carrying the x-retry-attempt header of
// attempt i+1 ("" for the first, then "1", "2", ...), spaced on the virtual
// clock by exactly waits (len(codes)-1 of them).
func wantLog(t testing.TB, g *rig, method iamtest.Method, waits []time.Duration, want ...codes.Code) {
	t.Helper()
	calls := g.callsOf(method)
	if len(calls) != len(want) {
		t.Fatalf("fake logged %d calls of %s, want %d: %+v", len(calls), method, len(want), g.fake.Calls())
	}
	for i, c := range calls {
		header := ""
		if i > 0 {
			header = strconv.Itoa(i)
		}
		if c.Attempt != header || c.Code != want[i] {
			t.Errorf("call %d of %s: header %q, code %v; want header %q, code %v", i+1, method, c.Attempt, c.Code, header, want[i])
		}
		if i > 0 && i-1 < len(waits) {
			if gap := c.Time.Sub(calls[i-1].Time); gap != waits[i-1] {
				t.Errorf("call %d of %s came %v after the one before, want %v", i+1, method, gap, waits[i-1])
			}
		}
	}
}

// wantSleeps fails t unless the virtual clock recorded exactly waits.
func wantSleeps(t testing.TB, g *rig, waits []time.Duration) {
	t.Helper()
	if got := g.clock.Sleeps(); !slices.Equal(got, waits) {
		t.Fatalf("waits %v, want %v", got, waits)
	}
}

// wantLastAttempt fails t unless n attempts were observed, the last one not
// followed by a retry, for the reason want.
func wantLastAttempt(t testing.TB, g *rig, n int, want interceptor.Reason) interceptor.Attempt {
	t.Helper()
	as := g.Attempts()
	if len(as) != n {
		t.Fatalf("observed %d attempts, want %d: %+v", len(as), n, as)
	}
	last := as[n-1]
	if last.N != n || last.Retrying || last.Wait != 0 || last.Reason != want {
		t.Fatalf("last attempt %+v (reason %v), want N %d, no retry, reason %v", last, last.Reason, n, want)
	}
	return last
}

// clonePolicy copies p.
func clonePolicy(p *iampb.Policy) *iampb.Policy { return proto.Clone(p).(*iampb.Policy) }

// grant returns a copy of p with member added to role (a new binding).
func grant(p *iampb.Policy, role, member string) *iampb.Policy {
	q := clonePolicy(p)
	q.Bindings = append(q.Bindings, &iampb.Binding{Role: role, Members: []string{member}})
	return q
}

// hasMember reports whether p grants role to member.
func hasMember(p *iampb.Policy, role, member string) bool {
	for _, b := range p.GetBindings() {
		if b.GetRole() == role && slices.Contains(b.GetMembers(), member) {
			return true
		}
	}
	return false
}

// injectedPrefix starts the message of every error the fake injects (see
// iamtest's SetIAMMessages).
const injectedPrefix = "iamtest: injected "

// concurrentChangeMessage is IAM's answer to a write with a stale etag, as
// the fake sends it.
const concurrentChangeMessage = "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff."

// rigLatency is the e2e fake's clock: it reads the time of the rig's
// virtual clock (so the call log is timed in virtual time) and waits its
// injected latency on real timers, or through the func set by setSleep.
type rigLatency struct {
	now   func() time.Time
	mu    sync.Mutex
	sleep func(ctx context.Context, d time.Duration) error
}

func (l *rigLatency) Now() time.Time { return l.now() }

func (l *rigLatency) Sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	f := l.sleep
	l.mu.Unlock()
	if f != nil {
		return f(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// setSleep makes the fake wait its latency through f (nil: real timers).
func (g *rig) setSleep(f func(ctx context.Context, d time.Duration) error) {
	g.latency.mu.Lock()
	g.latency.sleep = f
	g.latency.mu.Unlock()
}
