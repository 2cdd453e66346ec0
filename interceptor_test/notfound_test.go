package interceptor_test

// 404 right after a create: IAM reads are eventually consistent, so the
// guidance allows retrying NOT_FOUND, but only where the caller knows the
// resource exists (it just created it). The interceptor retries it only when
// asked.

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestNotFoundAfterCreate makes each new service account answer NOT_FOUND
// to its first two reads (the fake's SetPropagationReads(2), set here
// after the rig's own account exists).
func TestNotFoundAfterCreate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	getSA := func(g *rig, sa *adminpb.ServiceAccount, opts ...gax.CallOption) error {
		_, err := g.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name}, opts...)
		return err
	}

	t.Run("without opt-in: one attempt", func(t *testing.T) {
		g := newRig(t, withGRPC(), failedAttemptsOnly())
		g.fake.SetPropagationReads(2)
		sa := g.createAccount(t, "fresh-robot")

		err := getSA(g, sa)
		wantCode(t, err, codes.NotFound)
		wantSleeps(t, g, nil)
		wantLog(t, g, iamtest.MethodGetServiceAccount, nil, codes.NotFound)
		if a := wantLastAttempt(t, g, 1, interceptor.NotRetryable); a.Class != iamcodes.Propagation {
			t.Errorf("NOT_FOUND classed %v, want Propagation", a.Class)
		}
	})

	t.Run("per call: gax.WithGRPCOptions(RetryNotFound())", func(t *testing.T) {
		g := newRig(t, withGRPC(), failedAttemptsOnly())
		g.fake.SetPropagationReads(2)
		sa := g.createAccount(t, "fresh-robot")

		if err := getSA(g, sa, gax.WithGRPCOptions(interceptor.RetryNotFound())); err != nil {
			t.Fatalf("GetServiceAccount with RetryNotFound: %v", err)
		}
		waits := secs(1.5, 2.5)
		wantSleeps(t, g, waits)
		wantLog(t, g, iamtest.MethodGetServiceAccount, waits, codes.NotFound, codes.NotFound, codes.OK)
		for i, a := range g.Attempts() {
			if a.Class != iamcodes.Propagation || a.Reason != interceptor.Retry || a.Wait != waits[i] {
				t.Errorf("attempt %d: %+v, want a Propagation retry after %v", i+1, a, waits[i])
			}
		}

		// The option is per call: the next account's first read, without
		// it, is not retried.
		other := g.createAccount(t, "other-robot")
		wantCode(t, getSA(g, other), codes.NotFound)
		wantLog(t, g, iamtest.MethodGetServiceAccount, nil, codes.NotFound)
	})

	t.Run("per Retrier: WithRetryNotFound()", func(t *testing.T) {
		g := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithRetryNotFound()))
		g.fake.SetPropagationReads(2)
		sa := g.createAccount(t, "fresh-robot")

		if err := getSA(g, sa); err != nil {
			t.Fatalf("GetServiceAccount under WithRetryNotFound: %v", err)
		}
		waits := secs(1.5, 2.5)
		wantSleeps(t, g, waits)
		wantLog(t, g, iamtest.MethodGetServiceAccount, waits, codes.NotFound, codes.NotFound, codes.OK)

		// The admin client's hand-written GetIamPolicy takes no call
		// options: a Retrier-wide opt-in is the only way to reach it.
		pa := g.createAccount(t, "policy-robot")
		if _, err := g.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: pa.Name}); err != nil {
			t.Fatalf("admin GetIamPolicy under WithRetryNotFound: %v", err)
		}
		wantSleeps(t, g, waits)
		wantLog(t, g, iamtest.MethodAdminGetIamPolicy, waits, codes.NotFound, codes.NotFound, codes.OK)
	})
}
