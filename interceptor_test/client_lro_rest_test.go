package interceptor_test

import (
	"context"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestNewRESTClientOperationPoll (issue 33 item 1): a GAPIC REST client
// keeps its operations client private (its exported LROClient is nil), so
// NewRESTClient cannot turn that client's gax retries off; an operation's
// Poll (and Wait) given gax.WithRetry(nil), as the docs say, makes the
// Retrier's schedule alone: under WithMaxAttempts(2) a GetOperation that
// fails twice reaches the server 2 times and returns UNAVAILABLE, as over
// gRPC.
func TestNewRESTClientOperationPoll(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(interceptor.WithMaxAttempts(2)))
	ctx := context.Background()
	c, err := interceptor.NewRESTClient(ctx, g.retrier, iamv2.NewPoliciesRESTClient, g.fake.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g.fake.SetDenyOperationDelay(30 * time.Second)
	op, err := c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{
		Parent: "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies", PolicyId: "no-role-deletion",
		Policy: &iampb.Policy{Rules: []*iampb.PolicyRule{{Kind: &iampb.PolicyRule_DenyRule{DenyRule: &iampb.DenyRule{
			DeniedPrincipals:  []string{"principalSet://goog/group/contractors@example.com"},
			DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
		}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	g.clock.Advance(30 * time.Second)
	g.fake.FailNext(iamtest.MethodGetOperation, 2, codes.Unavailable)
	g.fake.ResetCalls()
	// A deadline of the caller's own (the op client's gax timeout, 10 s,
	// applies only to a context without one; the rig's clock is virtual).
	pctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	_, err = op.Poll(pctx, gax.WithRetry(nil))
	n := g.fake.CountCalls(iamtest.MethodGetOperation)
	t.Logf("GetOperation: %d server calls, err %v", n, err)
	if n != 2 || err == nil {
		t.Fatalf("poll under WithMaxAttempts(2), GetOperation failing twice: %d server calls, err %v; want 2 and UNAVAILABLE", n, err)
	}
}
