package deny_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestPerAttemptTimeoutBoundsTheWait runs on the wall clock inside a
// synctest bubble (the Retrier's, the polls' and the fake's time are the
// bubble's): operations take 60 s, the Retrier's per-attempt timeout is
// 10 s, so each write's wait is cut off, a transient failure followed by a
// fresh read and another write; once the first operation completes, the
// others fail on their stale etag, and the rule is there once. A context
// whose deadline passes during a wait ends the Update with the context's
// code.
func TestPerAttemptTimeoutBoundsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		r, err := interceptor.New(interceptor.WithPerAttemptTimeout(10*time.Second), interceptor.WithDeadline(5*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		c, err := iamv2.NewPoliciesClient(ctx, append(srv.ClientOptions(),
			option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			t.Fatal(err)
		}
		u, err := deny.NewUpdater(c, r)
		if err != nil {
			t.Fatal(err)
		}
		e := &env{srv: srv}
		e.seed(rule(0))
		srv.SetDenyOperationDelay(time.Minute)
		start := time.Now()
		if _, err := u.Update(ctx, policyName, deny.AddRule(rule(1))); err != nil {
			t.Fatal(err)
		}
		if e.count(rule(1)) != 1 {
			t.Fatalf("rule %d times", e.count(rule(1)))
		}
		if n := srv.CountCalls(iamtest.MethodUpdatePolicy); n < 2 {
			t.Fatalf("%d UpdatePolicy calls: no wait was cut off", n)
		}
		t.Logf("%d writes, %v", srv.CountCalls(iamtest.MethodUpdatePolicy), time.Since(start))

		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err = u.Update(dctx, policyName, deny.AddRule(rule(2)))
		if code := grpccodes.DeadlineExceeded; err == nil || !isCode(err, code) {
			t.Fatalf("%v, want DEADLINE_EXCEEDED", err)
		}
		synctest.Wait()
	})
}
