package deny_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// cancelBefore is a deny.Client that cancels the caller's context just
// before its n-th call (counted over GetPolicy and UpdatePolicy), then
// makes the call: the caller cancelling while the call is on its way.
type cancelBefore struct {
	deny.Client
	n      int
	cancel context.CancelFunc
}

func (c *cancelBefore) tick() {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

func (c *cancelBefore) GetPolicy(ctx context.Context, req *iampb.GetPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	c.tick()
	return c.Client.GetPolicy(ctx, req, opts...)
}

func (c *cancelBefore) UpdatePolicy(ctx context.Context, req *iampb.UpdatePolicyRequest, opts ...gax.CallOption) (*iamv2.UpdatePolicyOperation, error) {
	c.tick()
	return c.Client.UpdatePolicy(ctx, req, opts...)
}

// outcome is what a caller can tell of an Update's failure.
type outcome struct {
	status, codeOf grpccodes.Code
	canceled       bool // errors.Is(err, context.Canceled)
	calls          []string
}

func (o outcome) String() string {
	return fmt.Sprintf("status.Code %v, codes.CodeOf %v, errors.Is Canceled %v, calls %v", o.status, o.codeOf, o.canceled, o.calls)
}

// TestSameFailureSameAnswer: the same failure, met through iamv2's gRPC
// client and its REST client, gives the caller the same code (through
// status.Code, as the package's own refusals do, and codes.CodeOf), the
// same errors.Is answer for a cancel, and the same calls.
func TestSameFailureSameAnswer(t *testing.T) {
	type scenario struct {
		name  string
		opts  []deny.Option
		setup func(e *env)
		// cancelAt cancels ctx just before the n-th call (0: never); ended
		// cancels it before the Update.
		cancelAt int
		ended    bool
	}
	scenarios := []scenario{
		{name: "absent policy", setup: func(*env) {}},
		{name: "permission denied read", setup: func(e *env) {
			e.seed(rule(0))
			e.srv.FailNextWith(iamtest.MethodGetPolicy, 1, iamtest.PermissionDeniedError("iam.denypolicies.get", policyName))
		}},
		{name: "invalid write", setup: func(e *env) {
			e.seed(rule(0))
			e.srv.FailNext(iamtest.MethodUpdatePolicy, 1, grpccodes.InvalidArgument)
		}},
		{name: "failed precondition, etag unmoved", setup: func(e *env) {
			e.seed(rule(0))
			e.srv.FailNext(iamtest.MethodUpdatePolicy, 1, grpccodes.FailedPrecondition)
		}},
		{name: "outage past the attempt cap", setup: func(e *env) {
			e.seed(rule(0))
			e.srv.FailNext(iamtest.MethodGetPolicy, 5, grpccodes.Unavailable)
		}},
		{name: "operation fails", setup: func(e *env) {
			e.seed(rule(0))
			e.srv.SetDenyOperationDelay(1)
			e.srv.FailNext(iamtest.MethodGetOperation, 1, grpccodes.PermissionDenied)
		}},
		{name: "ended before", setup: func(e *env) { e.seed(rule(0)) }, ended: true},
		{name: "cancelled during the read", setup: func(e *env) { e.seed(rule(0)) }, cancelAt: 1},
		{name: "cancelled during the write", setup: func(e *env) { e.seed(rule(0)) }, cancelAt: 2},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var got [2]outcome
			for i, tr := range transports {
				e := newEnv(t, tr, []interceptor.Option{interceptor.WithMaxAttempts(3)}, sc.opts...)
				sc.setup(e)
				e.srv.ResetCalls()
				ctx, cancel := context.WithCancel(context.Background())
				u := e.u
				if sc.cancelAt > 0 {
					var err error
					u, err = deny.NewUpdater(&cancelBefore{Client: e.c, n: sc.cancelAt, cancel: cancel}, e.r)
					if err != nil {
						t.Fatal(err)
					}
				}
				if sc.ended {
					cancel()
				}
				_, err := u.Update(ctx, policyName, deny.AddRule(rule(1)))
				cancel()
				if err == nil {
					t.Fatalf("%s: no error", tr)
				}
				o := outcome{status: status.Code(err), codeOf: codes.CodeOf(err), canceled: errors.Is(err, context.Canceled)}
				for _, c := range e.srv.Calls() {
					o.calls = append(o.calls, fmt.Sprintf("%s:%v", c.Method, c.Code))
				}
				got[i] = o
				t.Logf("%s: %v (%v)", tr, o, err)
			}
			if got[0].status != got[1].status || got[0].codeOf != got[1].codeOf || got[0].canceled != got[1].canceled ||
				!slices.Equal(got[0].calls, got[1].calls) {
				t.Errorf("gRPC: %v\nREST: %v", got[0], got[1])
			}
			if got[0].status != got[0].codeOf {
				t.Errorf("status.Code %v but codes.CodeOf %v", got[0].status, got[0].codeOf)
			}
		})
	}
}
