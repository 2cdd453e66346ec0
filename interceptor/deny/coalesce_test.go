package deny_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"google.golang.org/api/option"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
		u := bubbleUpdater(t, srv)
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

// bubbleUpdater is an Updater on srv over gRPC with a Retrier of the
// defaults, for a test in a synctest bubble (its time is the bubble's).
func bubbleUpdater(t *testing.T, srv *iamtest.Server) *deny.Updater {
	t.Helper()
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := iamv2.NewPoliciesClient(context.Background(), append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
		t.Fatal(err)
	}
	u, err := deny.NewUpdater(c, r)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRefusedBatchIsSplit: a coalesced write that IAM refuses is split, so
// that only the caller to blame fails and the others' rules land. Two
// refusals the library cannot foresee, each from IAM's documentation: a
// denial condition calling a function other than the resource tag ones
// ("The condition can use CEL functions that evaluate resource tags. Other
// functions and operators are not supported.", google/iam/v2/deny.proto),
// refused INVALID_ARGUMENT; and a caller whose rules take the attachment
// point past "a total of 500 deny rules"
// (https://cloud.google.com/iam/docs/deny-overview).
func TestRefusedBatchIsSplit(t *testing.T) {
	timeCond := &expr.Expr{Expression: "request.time < timestamp('2030-01-01T00:00:00Z')"}
	badCond := rule(100)
	badCond.Condition = timeCond
	for name, tc := range map[string]struct {
		seed int           // rules seeded besides rule(0)
		bad  []deny.Change // the guilty caller's changes
	}{
		"condition": {0, []deny.Change{deny.AddRule(badCond)}},
		"500 rules": {495, []deny.Change{deny.AddRule(rule(101)), deny.AddRule(rule(102)), deny.AddRule(rule(103))}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				srv := iamtest.NewServer(t)
				u := bubbleUpdater(t, srv)
				e := &env{srv: srv}
				seeded := []deny.Rule{rule(0)}
				for i := range tc.seed {
					seeded = append(seeded, rule(1000+i))
				}
				e.seed(seeded...)
				srv.SetLatency(iamtest.MethodGetPolicy, 50*time.Millisecond)
				update := func(changes ...deny.Change) chan error {
					ch := make(chan error, 1)
					go func() {
						_, err := u.Update(ctx, policyName, changes...)
						ch <- err
					}()
					synctest.Wait() // queued (or reading) before the next caller comes
					return ch
				}
				first := update(deny.AddRule(rule(1)))
				a := update(deny.AddRule(rule(2)))
				bad := update(tc.bad...)
				c := update(deny.AddRule(rule(3)))
				if err := <-first; err != nil {
					t.Fatalf("first: %v", err)
				}
				errA, errBad, errC := <-a, <-bad, <-c
				if errA != nil || errC != nil || status.Code(errBad) != grpccodes.InvalidArgument {
					t.Fatalf("a: %v, bad: %v, c: %v; want only the bad one refused INVALID_ARGUMENT", errA, errBad, errC)
				}
				for _, r := range []deny.Rule{rule(1), rule(2), rule(3)} {
					if e.count(r) != 1 {
						t.Errorf("%v stored %d times, want 1", r.DeniedPrincipals, e.count(r))
					}
				}
				refused := 0
				for _, call := range srv.Calls() {
					if call.Method == iamtest.MethodUpdatePolicy && call.Code == grpccodes.InvalidArgument {
						refused++
					}
				}
				if refused != 2 {
					t.Errorf("%d UpdatePolicy calls refused, want 2: the coalesced write, then the bad caller's alone", refused)
				}
				if e.count(badCond) != 0 || e.count(rule(101)) != 0 {
					t.Errorf("the refused caller's rules were stored")
				}
			})
		})
	}
}
