package deny_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// policyName is the deny policy the tests change.
const policyName = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/guardrails"

// env is the package's rig (as policy's and role's env): the fake, on a
// virtual clock, and an Updater over a real iam/apiv2 PoliciesClient (gRPC
// or REST) wired with interceptor.NewClient or NewRESTClient on a Retrier
// that shares the clock.
type env struct {
	srv   *iamtest.Server
	clock *iamtest.VirtualClock
	r     *interceptor.Retrier
	c     *iamv2.PoliciesClient
	u     *deny.Updater

	mu       sync.Mutex
	attempts []interceptor.Attempt
}

var transports = []string{"grpc", "rest"}

// newEnv builds an env whose client speaks transport ("grpc" or "rest"),
// whose Retrier has ropts on top of the env's own and whose Updater has
// opts.
func newEnv(t testing.TB, transport string, ropts []interceptor.Option, opts ...deny.Option) *env {
	t.Helper()
	e := &env{clock: iamtest.NewVirtualClock(time.Now())}
	e.srv = iamtest.NewServer(t, iamtest.WithClock(e.clock), iamtest.WithSeed(1))
	r, err := interceptor.New(append([]interceptor.Option{
		interceptor.WithClock(e.clock),
		interceptor.WithRandom(func() float64 { return 0.5 }),
		interceptor.WithDeadline(10 * time.Minute),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			e.mu.Lock()
			e.attempts = append(e.attempts, a)
			e.mu.Unlock()
		}),
	}, ropts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.r = r
	ctx := context.Background()
	switch transport {
	case "grpc":
		e.c, err = iamv2.NewPoliciesClient(ctx, append(e.srv.ClientOptions(),
			option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	case "rest":
		e.c, err = iamv2.NewPoliciesRESTClient(ctx, append(e.srv.RESTClientOptions(),
			option.WithHTTPClient(&http.Client{Transport: r.RoundTripper(e.srv.HTTPClient().Transport)}))...)
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.Close() })
	if err := interceptor.DisableGAXRetries(e.c.CallOptions); err != nil {
		t.Fatal(err)
	}
	e.u, err = deny.NewUpdater(e.c, r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// rule is a deny rule of its own for each i.
func rule(i int) deny.Rule {
	return deny.Rule{
		DeniedPrincipals:  []string{fmt.Sprintf("principal://goog/subject/user%d@example.com", i)},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
	}
}

// seed stores a policy holding rules.
func (e *env) seed(rules ...deny.Rule) *iampb.Policy {
	p := &iampb.Policy{DisplayName: "guardrails"}
	for _, r := range rules {
		p.Rules = append(p.Rules, toProto(r))
	}
	return e.srv.SeedDenyPolicy(policyName, p)
}

func toProto(r deny.Rule) *iampb.PolicyRule {
	return &iampb.PolicyRule{Description: r.Description, Kind: &iampb.PolicyRule_DenyRule{DenyRule: &iampb.DenyRule{
		DeniedPrincipals: r.DeniedPrincipals, ExceptionPrincipals: r.ExceptionPrincipals,
		DeniedPermissions: r.DeniedPermissions, ExceptionPermissions: r.ExceptionPermissions,
		DenialCondition: r.Condition,
	}}}
}

// count is how many rules of the stored policy equal r.
func (e *env) count(r deny.Rule) int {
	n := 0
	for _, pr := range e.srv.DenyPolicy(policyName).GetRules() {
		if got, ok := deny.RuleOf(pr); ok && got.Equal(r) {
			n++
		}
	}
	return n
}

func (e *env) applied(m iamtest.Method) int {
	n := 0
	for _, c := range e.srv.Calls() {
		if c.Method == m && c.Applied {
			n++
		}
	}
	return n
}

func isCode(err error, c grpccodes.Code) bool { return codes.CodeOf(err) == c }
