package deny_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// contentionRun is what one run of n writers on one deny policy made.
type contentionRun struct {
	writes    int           // UpdatePolicy calls the fake answered
	reads     int           // GetPolicy calls
	polls     int           // GetOperation calls
	failed    int           // Updates that returned an error
	maxWrites int           // the most UpdatePolicy calls one writer made
	allLanded time.Duration // virtual time until the last Update returned
}

// contend runs n writers, each its own process in effect (its own Retrier,
// random stream, client and Updater over one fake on one virtual clock),
// each adding a rule of its own to ONE deny policy at the same moment, with
// faultRate of every deny call failing (UNAVAILABLE or INTERNAL), lostRate
// of the UpdatePolicy calls committing and then answering UNAVAILABLE, and
// operations completing opDelay after their call. It fails t unless every
// rule landed exactly once.
func contend(t *testing.T, tr string, n int, seed int64, faultRate, lostRate float64, opDelay time.Duration) contentionRun {
	t.Helper()
	return contendWithin(t, tr, n, seed, faultRate, lostRate, opDelay, 30*time.Minute)
}

// contendWithin is contend with each writer's retry deadline.
func contendWithin(t *testing.T, tr string, n int, seed int64, faultRate, lostRate float64, opDelay, deadline time.Duration) contentionRun {
	t.Helper()
	clock := iamtest.NewVirtualClock(time.Now())
	srv := iamtest.NewServer(t, iamtest.WithClock(clock), iamtest.WithSeed(seed))
	srv.SeedDenyPolicy(policyName, nil)
	e := &env{srv: srv, clock: clock}
	e.seed(rule(0))
	for _, m := range []iamtest.Method{iamtest.MethodGetPolicy, iamtest.MethodUpdatePolicy, iamtest.MethodGetOperation} {
		if faultRate > 0 {
			srv.SetFailureRate(m, faultRate, grpccodes.Unavailable, grpccodes.Internal)
		}
	}
	if lostRate > 0 {
		srv.SetLostAnswerRate(iamtest.MethodUpdatePolicy, lostRate)
	}
	srv.SetDenyOperationDelay(opDelay)
	srv.SetLatency(iamtest.MethodUpdatePolicy, 50*time.Millisecond)

	ctx := context.Background()
	updaters := make([]*deny.Updater, n)
	counters := make([]*countingClient, n)
	for i := range n {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
		r, err := interceptor.New(
			interceptor.WithClock(clock),
			interceptor.WithRandom(func() float64 { mu.Lock(); defer mu.Unlock(); return rng.Float64() }),
			interceptor.WithDeadline(deadline),
		)
		if err != nil {
			t.Fatal(err)
		}
		var c *iamv2.PoliciesClient
		if tr == "grpc" {
			c, err = iamv2.NewPoliciesClient(ctx, append(srv.ClientOptions(),
				option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
		} else {
			c, err = iamv2.NewPoliciesRESTClient(ctx, append(srv.RESTClientOptions(),
				option.WithHTTPClient(&http.Client{Transport: r.RoundTripper(srv.HTTPClient().Transport)}))...)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			t.Fatal(err)
		}
		counters[i] = &countingClient{Client: c}
		if updaters[i], err = deny.NewUpdater(counters[i], r); err != nil {
			t.Fatal(err)
		}
	}
	srv.ResetCalls()
	start := clock.Now()
	errs := make([]error, n)
	clock.Go(ctx, n, func(ctx context.Context, i int) {
		_, errs[i] = updaters[i].Update(ctx, policyName, deny.AddRule(rule(i+1)))
	})
	run := contentionRun{
		allLanded: clock.Since(start),
		writes:    srv.CountCalls(iamtest.MethodUpdatePolicy),
		reads:     srv.CountCalls(iamtest.MethodGetPolicy),
		polls:     srv.CountCalls(iamtest.MethodGetOperation),
	}
	for _, c := range counters {
		run.maxWrites = max(run.maxWrites, c.updates)
	}
	for i, err := range errs {
		if err != nil {
			run.failed++
			t.Errorf("writer %d: %v", i+1, err)
		}
	}
	for i := range n + 1 {
		if c := e.count(rule(i)); c != 1 {
			t.Errorf("rule %d is in the policy %d times, want once", i, c)
		}
	}
	if got := len(srv.DenyPolicy(policyName).GetRules()); got != n+1 {
		t.Errorf("%d rules, want %d", got, n+1)
	}
	return run
}

// TestConcurrentWriters: writers adding different rules to one deny policy
// at once, with faults, lost answers and delayed operations, over gRPC and
// REST: every rule lands exactly once.
func TestConcurrentWriters(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			run := contend(t, tr, 10, 7, 0.2, 0.15, 3*time.Second)
			t.Logf("%s: %d writers: %.2f writes per writer, all landed after %v", tr, 10, float64(run.writes)/10, run.allLanded.Round(time.Millisecond))
		})
	}
}

// TestMeasureDenyContention is the closing note's measurement: N writers
// each adding a different rule to one deny policy with 20% faults and 15%
// lost answers. It is slow: run it with IAMRETRY_MEASURE=1.
func TestMeasureDenyContention(t *testing.T) {
	if os.Getenv("IAMRETRY_MEASURE") == "" {
		t.Skip("set IAMRETRY_MEASURE=1 to measure")
	}
	for _, tc := range []struct {
		n        int
		delay    time.Duration
		deadline time.Duration
	}{
		{10, 0, 30 * time.Minute}, {10, 5 * time.Second, 30 * time.Minute},
		{50, 0, 30 * time.Minute}, {50, 5 * time.Second, 30 * time.Minute},
		// issue 28: 1 s operations at the guidance's CI/CD deadline (the
		// serial limit at N = 50 is about a minute): none gives up.
		{50, time.Second, 300 * time.Second},
	} {
		n, delay := tc.n, tc.delay
		const seeds = 5
		var writes, reads, polls, failed, most int
		var landed time.Duration
		for seed := range seeds {
			run := contendWithin(t, "grpc", n, int64(seed+1), 0.2, 0.15, delay, tc.deadline)
			writes += run.writes
			reads += run.reads
			polls += run.polls
			failed += run.failed
			most = max(most, run.maxWrites)
			landed += run.allLanded
		}
		t.Logf("N=%d op delay %v deadline %v (%d seeds): %.2f writes/writer (most by one writer %d), %.2f reads/writer, %.2f polls/writer, failed %d, all landed after %v (mean virtual time)",
			n, delay, tc.deadline, seeds, float64(writes)/float64(n*seeds), most, float64(reads)/float64(n*seeds), float64(polls)/float64(n*seeds), failed, (landed / seeds).Round(time.Millisecond))
	}
}

// countingClient counts the UpdatePolicy calls of one writer.
type countingClient struct {
	deny.Client
	updates int // one writer's goroutine calls it: no lock needed
}

func (c *countingClient) UpdatePolicy(ctx context.Context, req *iampb.UpdatePolicyRequest, opts ...gax.CallOption) (*iamv2.UpdatePolicyOperation, error) {
	c.updates++
	return c.Client.UpdatePolicy(ctx, req, opts...)
}
