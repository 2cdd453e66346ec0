package deny_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestCoalescing50: 50 goroutines adding each its own rule to one deny
// policy through one Updater, against the fake at 50 ms a call (read,
// write, poll), in a synctest bubble (the fake's and the Retrier's time
// are the bubble's): the Updates are coalesced, at most 5 writes in all,
// every rule lands once, and all are done within 1.5 s of virtual time.
func TestCoalescing50(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		r, err := interceptor.New()
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
		for _, m := range []iamtest.Method{iamtest.MethodGetPolicy, iamtest.MethodUpdatePolicy, iamtest.MethodGetOperation} {
			srv.SetLatency(m, 50*time.Millisecond)
		}
		srv.ResetCalls()
		const n = 50
		start := time.Now()
		var wg sync.WaitGroup
		for i := 1; i <= n; i++ {
			wg.Go(func() {
				if _, err := u.Update(ctx, policyName, deny.AddRule(rule(i))); err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		writes := srv.CountCalls(iamtest.MethodUpdatePolicy)
		t.Logf("%d callers of one deny Updater: %d writes, %d reads, %d polls, all done in %v", n, writes,
			srv.CountCalls(iamtest.MethodGetPolicy), srv.CountCalls(iamtest.MethodGetOperation), took)
		if writes > 5 || took > 1500*time.Millisecond {
			t.Errorf("%d writes in %v; want at most 5 within 1.5s", writes, took)
		}
		for i := 0; i <= n; i++ {
			if c := e.count(rule(i)); c != 1 {
				t.Errorf("rule %d in the policy %d times", i, c)
			}
		}
	})
}
