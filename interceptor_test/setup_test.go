package interceptor_test

// The shared rig of the end-to-end tests: a fake IAM server and a Retrier on
// one virtual clock, and the three kinds of clients the interceptor is added
// to as a dial option.

import (
	"context"
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
	gax "github.com/googleapis/gax-go/v2"
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

// e2eRig is one end-to-end setup: the fake IAM server (over bufconn, on the
// virtual clock, so its call log is timed in virtual time), a Retrier on the
// same clock with r = 0.5 and an observer that records every Attempt, and
// three kinds of clients with the Retrier's interceptor as a dial option:
// the admin client, the iam/apiv1 IamPolicyClient (both with gax's own
// retries turned off, so that only the interceptor retries and no test waits
// on gax's real timers) and a raw connection with its generated
// google.iam.v1.IAMPolicy stub. Everything is closed in t.Cleanup.
//
// The rig creates one service account, sa, whose name is the resource the
// policy tests use, and then starts from an empty call log, no recorded
// sleep and no recorded attempt.
type e2eRig struct {
	fake    *iamtest.Server
	clock   *vclock.Clock
	latency *rigLatency // how the fake waits its latency
	retrier *interceptor.Retrier
	admin   *admin.IamClient
	policy  *iamapi.IamPolicyClient
	conn    *grpc.ClientConn
	raw     iampb.IAMPolicyClient
	sa      *adminpb.ServiceAccount

	mu       sync.Mutex
	attempts []interceptor.Attempt
}

// newE2ERig builds a rig whose Retrier has the options opts on top of the
// rig's own (virtual clock, r = 0.5, the recording observer).
func newE2ERig(t testing.TB, opts ...interceptor.Option) *e2eRig {
	t.Helper()
	return newE2ERigWithFake(t, nil, opts...)
}

// newE2ERigWithFake is newE2ERig with a setup of the fake server too, run
// before anything else reaches it.
func newE2ERigWithFake(t testing.TB, setup func(*iamtest.Server), opts ...interceptor.Option) *e2eRig {
	t.Helper()
	ctx := context.Background()
	g := &e2eRig{clock: vclock.New()}
	g.latency = &rigLatency{now: g.clock.Now}

	// NewServer's cleanup is registered first, so it runs last (cleanups
	// run last-in first-out): after the clients close.
	g.fake = iamtest.NewServer(t, iamtest.WithClock(g.latency))
	if setup != nil {
		setup(g.fake)
	}

	ropts := append([]interceptor.Option{
		interceptor.WithClock(g.clock),
		interceptor.WithRandom(halfRandom),
		interceptor.WithObserver(g.record),
	}, opts...)
	r, err := interceptor.New(ropts...)
	if err != nil {
		t.Fatalf("interceptor.New: %v", err)
	}
	g.retrier = r
	dial := grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())
	clientOpts := append(slices.Clip(g.fake.ClientOptions()), option.WithGRPCDialOption(dial))

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
	return g
}

// record is the rig's observer: it keeps the failed attempts (not the final
// Succeeded reports, which the tests of this package do not count).
func (g *e2eRig) record(_ context.Context, a interceptor.Attempt) {
	if a.Reason == interceptor.Succeeded {
		return
	}
	g.mu.Lock()
	g.attempts = append(g.attempts, a)
	g.mu.Unlock()
}

// Attempts returns a copy of the attempts observed so far.
func (g *e2eRig) Attempts() []interceptor.Attempt {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.attempts)
}

// takeAttempts returns the attempts observed so far and forgets them.
func (g *e2eRig) takeAttempts() []interceptor.Attempt {
	g.mu.Lock()
	defer g.mu.Unlock()
	as := g.attempts
	g.attempts = nil
	return as
}

// reset forgets the call log, the recorded sleeps and the observed attempts
// (the stored data, the faults and the time stay).
func (g *e2eRig) reset() {
	g.fake.ResetCalls()
	g.clock.Reset()
	g.mu.Lock()
	g.attempts = nil
	g.mu.Unlock()
}

// createAccount creates a service account in project p1 and then resets the
// rig's records.
func (g *e2eRig) createAccount(t testing.TB, id string) *adminpb.ServiceAccount {
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
func (g *e2eRig) callsOf(method iamtest.Method) []iamtest.Call {
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
	read func(ctx context.Context, g *e2eRig, opts ...grpc.CallOption) error
	// setMethod is the method set calls, as the fake logs it.
	setMethod iamtest.Method
	// get reads the policy of resource.
	get func(ctx context.Context, g *e2eRig, resource string) (*iampb.Policy, error)
	// set writes p as the policy of resource (with whatever etag p carries).
	set func(ctx context.Context, g *e2eRig, resource string, p *iampb.Policy) (*iampb.Policy, error)
}

// e2eKinds are the three kinds of clients.
var e2eKinds = []e2eKind{
	{
		name:       "admin.IamClient",
		readMethod: iamtest.MethodGetServiceAccount,
		read: func(ctx context.Context, g *e2eRig, opts ...grpc.CallOption) error {
			_, err := g.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: g.sa.Name}, gax.WithGRPCOptions(opts...))
			return err
		},
		setMethod: iamtest.MethodAdminSetIamPolicy,
		// The admin client's policy methods are hand-written around
		// iam.Policy and take no call options.
		get: func(ctx context.Context, g *e2eRig, resource string) (*iampb.Policy, error) {
			p, err := g.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
			if err != nil {
				return nil, err
			}
			return p.InternalProto, nil
		},
		set: func(ctx context.Context, g *e2eRig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
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
		read: func(ctx context.Context, g *e2eRig, opts ...grpc.CallOption) error {
			_, err := g.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: g.sa.Name}, gax.WithGRPCOptions(opts...))
			return err
		},
		setMethod: iamtest.MethodSetIamPolicy,
		get: func(ctx context.Context, g *e2eRig, resource string) (*iampb.Policy, error) {
			return g.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
		},
		set: func(ctx context.Context, g *e2eRig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
			return g.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
		},
	},
	{
		name:       "grpc.ClientConn",
		readMethod: iamtest.MethodGetIamPolicy,
		read: func(ctx context.Context, g *e2eRig, opts ...grpc.CallOption) error {
			_, err := g.raw.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: g.sa.Name}, opts...)
			return err
		},
		setMethod: iamtest.MethodSetIamPolicy,
		get: func(ctx context.Context, g *e2eRig, resource string) (*iampb.Policy, error) {
			return g.raw.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
		},
		set: func(ctx context.Context, g *e2eRig, resource string, p *iampb.Policy) (*iampb.Policy, error) {
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
func wantLog(t testing.TB, g *e2eRig, method iamtest.Method, waits []time.Duration, want ...codes.Code) {
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
func wantSleeps(t testing.TB, g *e2eRig, waits []time.Duration) {
	t.Helper()
	if got := g.clock.Sleeps(); !slices.Equal(got, waits) {
		t.Fatalf("waits %v, want %v", got, waits)
	}
}

// wantLastAttempt fails t unless n attempts were observed, the last one not
// followed by a retry, for the reason want.
func wantLastAttempt(t testing.TB, g *e2eRig, n int, want interceptor.Reason) interceptor.Attempt {
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
const injectedPrefix = "fakeiam: injected "

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
func (g *e2eRig) setSleep(f func(ctx context.Context, d time.Duration) error) {
	g.latency.mu.Lock()
	g.latency.sleep = f
	g.latency.mu.Unlock()
}
