package role_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
	"github.com/iamretry/iamretry/interceptor/role/iamv1"
)

// roleName is the custom role the tests change.
const roleName = "projects/p/roles/deployer"

// env is a fake IAM server and a Retrier on one virtual clock, with the two
// real clients a role.Updater runs over: the admin client (gRPC) and the
// IAM v1 discovery client (REST), with the Retrier's interceptor (gax
// retries off) or RoundTripper beneath the Updater, as a program would
// wire them.
type env struct {
	srv   *iamtest.Server
	clock *iamtest.VirtualClock
	r     *interceptor.Retrier
	admin *admin.IamClient
	rest  *iam.Service

	mu       sync.Mutex
	attempts []interceptor.Attempt
}

// kind is one of the two clients.
type kind struct {
	name   string
	client func(e *env) role.Client
}

var kinds = []kind{
	{"grpc", func(e *env) role.Client { return e.admin }},
	{"rest", func(e *env) role.Client { return iamv1.Roles(e.rest) }},
}

func newEnv(t testing.TB, opts ...interceptor.Option) *env {
	t.Helper()
	e := &env{clock: iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e.srv = iamtest.NewServer(t, iamtest.WithClock(e.clock))
	e.r = newRetrier(t, e.clock, 1, append([]interceptor.Option{interceptor.WithObserver(e.observe)}, opts...)...)
	ctx := context.Background()
	var err error
	e.admin, err = admin.NewIamClient(ctx, append(e.srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(e.r.UnaryClientInterceptor())))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.admin.Close() })
	if err := interceptor.DisableGAXRetries(e.admin.CallOptions); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: e.r.RoundTripper(e.srv.HTTPClient().Transport)}
	e.rest, err = iam.NewService(ctx, append(e.srv.RESTClientOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newRetrier builds a Retrier on clock whose random source is the stream
// seed of a PCG (safe for concurrent use).
func newRetrier(t testing.TB, clock interceptor.Clock, seed uint64, opts ...interceptor.Option) *interceptor.Retrier {
	t.Helper()
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 1))
	r, err := interceptor.New(append([]interceptor.Option{
		interceptor.WithClock(clock),
		interceptor.WithRandom(func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return rng.Float64()
		}),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (e *env) observe(_ context.Context, a interceptor.Attempt) {
	e.mu.Lock()
	e.attempts = append(e.attempts, a)
	e.mu.Unlock()
}

func (e *env) takeAttempts() []interceptor.Attempt {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.attempts
	e.attempts = nil
	return out
}

// updater returns an Updater over c on the env's Retrier.
func (e *env) updater(t testing.TB, c role.Client, opts ...role.Option) *role.Updater {
	t.Helper()
	u, err := role.NewUpdater(c, e.r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// createRole creates roleName with perms, then empties the call log.
func (e *env) createRole(t testing.TB, perms ...string) *adminpb.Role {
	t.Helper()
	r, err := e.admin.CreateRole(context.Background(), &adminpb.CreateRoleRequest{
		Parent: "projects/p", RoleId: "deployer",
		Role: &adminpb.Role{Title: "Deployer", Description: "deploys", IncludedPermissions: perms, Stage: adminpb.Role_BETA},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv.ResetCalls()
	return r
}

// calls counts the logged calls of m, and those of them that acted.
func (e *env) calls(m iamtest.Method) (n, applied int) {
	for _, c := range e.srv.Calls() {
		if c.Method == m {
			n++
			if c.Applied {
				applied++
			}
		}
	}
	return n, applied
}

// recorder is a role.Client that records the UpdateRole requests and the
// options of every call, and may run a hook before each write (another
// writer slipping in).
type recorder struct {
	role.Client
	mu          sync.Mutex
	updates     []*adminpb.UpdateRoleRequest
	opts        [][]gax.CallOption
	beforeWrite func(n int)
}

func (c *recorder) GetRole(ctx context.Context, req *adminpb.GetRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	c.mu.Lock()
	c.opts = append(c.opts, slices.Clone(opts))
	c.mu.Unlock()
	return c.Client.GetRole(ctx, req, opts...)
}

func (c *recorder) UpdateRole(ctx context.Context, req *adminpb.UpdateRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	c.mu.Lock()
	c.updates = append(c.updates, req)
	c.opts = append(c.opts, slices.Clone(opts))
	n := len(c.updates)
	hook := c.beforeWrite
	c.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return c.Client.UpdateRole(ctx, req, opts...)
}
