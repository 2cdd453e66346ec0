package policy_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// env is the package's rig: a fake IAM server (the public iamtest, made
// with opts) and a raw-connection Client to it, both closed in t.Cleanup.
// Each test makes its own, with its own virtual clocks (updater), so tests
// are independent and run in parallel.
type env struct {
	srv    *iamtest.Server
	conn   *grpc.ClientConn
	client policy.Client
}

func newEnv(t testing.TB, opts ...iamtest.Option) *env {
	t.Helper()
	srv := iamtest.NewServer(t, opts...)
	conn, err := srv.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &env{srv: srv, conn: conn, client: policy.FromConn(conn)}
}

// updater builds an Updater over c on a fresh virtual clock, and returns
// the clock too.
func updater(t testing.TB, c policy.Client, opts ...interceptor.Option) (*policy.Updater, *vclock.Clock) {
	t.Helper()
	clk := vclock.New()
	u, err := newUpdater(c, append([]interceptor.Option{interceptor.WithClock(clk)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return u, clk
}

func (e *env) gets() int { return e.srv.CountCalls(iamtest.MethodGetIamPolicy) }
func (e *env) sets() int { return e.srv.CountCalls(iamtest.MethodSetIamPolicy) }

// hookClient wraps a Client: it records the requests and can run a hook
// before each call (n counts the calls of that method, from 1). A hook
// that returns an error makes the call fail with it without reaching the
// server.
type hookClient struct {
	policy.Client
	beforeGet func(ctx context.Context, n int) error
	beforeSet func(ctx context.Context, n int, req *iampb.SetIamPolicyRequest) error
	// beforeGet2, when set, runs after holdFirstRead's gate (its read n,
	// with the read's context).
	beforeGet2 func(ctx context.Context, n int) error

	mu      sync.Mutex
	getReqs []*iampb.GetIamPolicyRequest
	setReqs []*iampb.SetIamPolicyRequest
	ngets   atomic.Int32
	nsets   atomic.Int32
}

func (h *hookClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	n := int(h.ngets.Add(1))
	h.mu.Lock()
	h.getReqs = append(h.getReqs, proto.Clone(req).(*iampb.GetIamPolicyRequest))
	h.mu.Unlock()
	if h.beforeGet != nil {
		if err := h.beforeGet(ctx, n); err != nil {
			return nil, err
		}
	}
	return h.Client.GetIamPolicy(ctx, req, opts...)
}

func (h *hookClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	n := int(h.nsets.Add(1))
	h.mu.Lock()
	h.setReqs = append(h.setReqs, proto.Clone(req).(*iampb.SetIamPolicyRequest))
	h.mu.Unlock()
	if h.beforeSet != nil {
		if err := h.beforeSet(ctx, n, req); err != nil {
			return nil, err
		}
	}
	return h.Client.SetIamPolicy(ctx, req, opts...)
}

func (h *hookClient) lastSet(t testing.TB) *iampb.SetIamPolicyRequest {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.setReqs) == 0 {
		t.Fatal("no SetIamPolicy request was made")
	}
	return h.setReqs[len(h.setReqs)-1]
}

// members returns how many times each member appears across p's bindings
// of role (every role when role is "").
func members(p *iampb.Policy, role string) map[string]int {
	m := map[string]int{}
	for _, b := range p.GetBindings() {
		if role == "" || b.GetRole() == role {
			for _, x := range b.GetMembers() {
				m[x]++
			}
		}
	}
	return m
}

// waitFor polls cond until it holds, failing after 5 real seconds (only
// reached when the code under test hangs).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// newUpdater builds a Retrier from opts and an Updater over c on it.
func newUpdater(c policy.Client, opts ...interceptor.Option) (*policy.Updater, error) {
	r, err := interceptor.New(opts...)
	if err != nil {
		return nil, err
	}
	return policy.NewUpdater(c, r)
}

type gaxCallOption = gax.CallOption

// goexit ends the calling goroutine as t.FailNow does.
func goexit() { runtime.Goexit() }
