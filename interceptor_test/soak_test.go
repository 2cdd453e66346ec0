package interceptor_test

// A seeded random-fault soak: thousands of calls through the real clients
// while 30% of all calls fail transiently.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

const (
	soakCalls = 2000
	soakRate  = 0.3
	soakSeed  = 20260101
)

// soakResult is what the soak saw.
type soakResult struct {
	calls, rpcs, injected        int
	succeeded, firstTry          int
	gaveUpDeadline, gaveUpBudget int
	budgetRefusals               int
	byAttempts                   map[int]int        // calls by the attempts they made
	failedBy                     map[codes.Code]int // failed attempts by code
	virtual                      time.Duration      // virtual time the waits took
	maxAttempts, maxAttemptsSeen int
}

// TestRandomFaultSoak makes soakCalls calls through the three kinds of
// clients (GetIamPolicy through IamPolicyClient and the raw stub;
// GetServiceAccount, ListRoles and GetRole through the admin client), while
// the fake fails 30% of all calls with UNAVAILABLE, INTERNAL or
// DEADLINE_EXCEEDED (seeded, so a run is reproducible), under the default
// 60 s retry deadline.
//
// Every call must either succeed or give up legitimately with the server's
// transient error: at the retry deadline, or refused by the retry budget. No
// call may make more attempts than the deadline allows: the largest k whose
// first k-1 waits fit in 60 s (6 with r = 0.5: 1.5+2.5+4.5+8.5+16.5 = 33.5 s,
// and another 32 s would pass 60 s). The odds that a call fails 6 times in a
// row are 0.3^6, so about one or two calls in 2,000 give up.
//
// The calls run one after another on the rig's virtual clock (as threads of
// its Go they would overlap in virtual time, yet still run one at a time,
// woken in time order). (Shards in parallel,
// each with its own fake, Retrier and clock, were tried: on a small machine
// under -race they were slower, not faster.)
//
// The retry budget stays on, as it is by default. Its per-second floor (10
// retries a second, 10 saved at most) refills on the virtual clock, which
// every retry moves by at least 1.5 s, so it should never refuse a retry
// here; refusals are counted (Reason BudgetExhausted) and reported, and a
// call they stop counts as a legitimate give-up.
func TestRandomFaultSoak(t *testing.T) {
	t.Parallel()
	start := time.Now()
	all := runSoak(t)
	if all.succeeded+all.gaveUpDeadline+all.gaveUpBudget != soakCalls {
		t.Errorf("%d succeeded + %d gave up at the deadline + %d stopped by the budget != %d calls",
			all.succeeded, all.gaveUpDeadline, all.gaveUpBudget, soakCalls)
	}
	// With 30% failures and six attempts, all but ~0.07% succeed.
	if all.succeeded < soakCalls*99/100 {
		t.Errorf("only %d of %d calls succeeded", all.succeeded, soakCalls)
	}
	if rate := float64(all.injected) / float64(all.rpcs); rate < 0.25 || rate > 0.35 {
		t.Errorf("the fake failed %.1f%% of %d RPCs, want about %.0f%%", 100*rate, all.rpcs, 100*soakRate)
	}

	var hist []string
	for _, n := range slices.Sorted(maps.Keys(all.byAttempts)) {
		hist = append(hist, fmt.Sprintf("%d:%d", n, all.byAttempts[n]))
	}
	t.Logf("soak (seed %d): %d calls, %d RPCs, %d failed (%v); "+
		"%d succeeded (%d at once, %d after retries); %d gave up at the 60 s deadline, "+
		"%d stopped by the retry budget (%d budget refusals in all); calls by attempts made %s "+
		"(most seen %d, most allowed %d); virtual time %v, wall time %v",
		soakSeed, all.calls, all.rpcs, all.injected, all.failedBy,
		all.succeeded, all.firstTry, all.succeeded-all.firstTry, all.gaveUpDeadline,
		all.gaveUpBudget, all.budgetRefusals, strings.Join(hist, " "),
		all.maxAttemptsSeen, all.maxAttempts, all.virtual.Round(time.Second), time.Since(start).Round(time.Millisecond))
}

// runSoak makes soakCalls calls through one rig whose fake is seeded
// soakSeed, checks each, and returns what it saw.
func runSoak(t *testing.T) soakResult {
	g := newRig(t, withFake(func(s *iamtest.Server) { s.SetSeed(soakSeed) }), withGRPC(), failedAttemptsOnly())
	res := soakResult{calls: soakCalls, byAttempts: map[int]int{}, failedBy: map[codes.Code]int{}}

	// The most attempts the default deadline allows, from the schedule.
	b := g.retrier.Backoff()
	res.maxAttempts = 1
	sum := time.Duration(0)
	for n := 0; ; n++ { // n: the retry whose wait is added
		if sum += b.Delay(n, 0.5); sum > interceptor.DefaultDeadline {
			break
		}
		res.maxAttempts++
	}
	if res.maxAttempts != 6 {
		t.Fatalf("the 60 s deadline allows %d attempts, the documented schedule 6", res.maxAttempts)
	}

	ctx := context.Background()
	if _, err := g.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{
		Resource: "projects/p1",
		Policy:   &iampb.Policy{Bindings: []*iampb.Binding{{Role: testRole, Members: []string{testMember}}}},
	}); err != nil {
		t.Fatal(err)
	}

	// gax.WithTimeout(0) drops the admin client's default 60 s timeout on
	// GetServiceAccount: a wall-clock context deadline, which the virtual
	// clock overtakes as soon as the soak's waits add up to a minute; from
	// then on it would forbid every retry (Reason ContextDeadline). The other
	// methods have no default timeout.
	noTimeout := gax.WithTimeout(0)
	ops := []struct {
		method iamtest.Method
		call   func() error
	}{
		{iamtest.MethodGetIamPolicy, func() error {
			_, err := g.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
			return err
		}},
		{iamtest.MethodGetServiceAccount, func() error {
			_, err := g.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: g.sa.Name}, noTimeout)
			return err
		}},
		{iamtest.MethodListRoles, func() error {
			_, err := g.admin.ListRolesIter(ctx, &adminpb.ListRolesRequest{}).Next()
			return err
		}},
		{iamtest.MethodGetRole, func() error {
			_, err := g.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: testRole})
			return err
		}},
		{iamtest.MethodGetIamPolicy, func() error {
			_, err := g.raw.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
			return err
		}},
	}

	g.reset()
	g.fake.SetFailureRate(iamtest.AnyMethod, soakRate, codes.Unavailable, codes.Internal, codes.DeadlineExceeded)
	virtualStart := g.clock.Now()
	for i := range soakCalls {
		op := ops[i%len(ops)]
		err := op.call()
		// The call's own RPCs and attempts; the logs start empty for the
		// next call (copying a growing log every call would be quadratic).
		log, as := g.fake.Calls(), g.takeAttempts()
		g.fake.ResetCalls()
		made := len(log)
		res.rpcs += made
		res.byAttempts[made]++
		res.maxAttemptsSeen = max(res.maxAttemptsSeen, made)
		for _, c := range log {
			if c.Injected {
				res.injected++
			}
			if c.Method != op.method {
				t.Fatalf("call %d (%s) made a call of %s", i, op.method, c.Method)
			}
		}
		for _, a := range as {
			res.failedBy[status.Code(a.Err)]++
			if a.Reason == interceptor.BudgetExhausted {
				res.budgetRefusals++
			}
		}
		if made > res.maxAttempts {
			t.Errorf("call %d (%s): %d attempts, more than the %d the deadline allows", i, op.method, made, res.maxAttempts)
		}

		if err == nil {
			res.succeeded++
			if made == 1 {
				res.firstTry++
			}
			if len(as) != made-1 {
				t.Errorf("call %d (%s) succeeded after %d RPCs but %d failed attempts were observed", i, op.method, made, len(as))
			}
			continue
		}
		// A failure: the server's transient error, given up legitimately.
		if len(as) == 0 || len(as) != made {
			t.Errorf("call %d (%s) failed (%v) after %d RPCs with %d observed attempts", i, op.method, err, made, len(as))
			continue
		}
		if iamcodes.OfError(err) != iamcodes.Transient || !strings.HasPrefix(status.Convert(err).Message(), injectedPrefix) {
			t.Errorf("call %d (%s) failed with %v, not an injected transient error", i, op.method, err)
		}
		switch last := as[len(as)-1]; last.Reason {
		case interceptor.DeadlineReached:
			res.gaveUpDeadline++
			if made != res.maxAttempts {
				t.Errorf("call %d (%s) reached the deadline after %d attempts, want %d", i, op.method, made, res.maxAttempts)
			}
		case interceptor.BudgetExhausted:
			res.gaveUpBudget++
		default:
			t.Errorf("call %d (%s) gave up after %d attempts for %v (%v)", i, op.method, made, last.Reason, err)
		}
	}
	res.virtual = g.clock.Now().Sub(virtualStart)
	return res
}
