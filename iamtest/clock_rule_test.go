package iamtest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// Issue 31, item 7: Go numbers its threads 0..n-1, so a slice of n filled by
// index never panics (it numbered them 1..n).
func TestVirtualClockGoNumbersFromZero(t *testing.T) {
	t.Parallel()
	c := iamtest.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	const n = 5
	seen := make([]int, n)
	c.Go(context.Background(), n, func(ctx context.Context, i int) {
		seen[i]++
		if err := c.Sleep(ctx, time.Duration(n-i)*time.Second); err != nil {
			t.Error(err)
		}
	})
	for i, k := range seen {
		if k != 1 {
			t.Errorf("thread %d ran %d times", i, k)
		}
	}
	if got := c.Since(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); got != n*time.Second {
		t.Errorf("the threads' waits overlap to %v, want %v", got, n*time.Second)
	}
}

// Issue 31, item 7: a goroutine that is no thread of the clock (a go
// statement of the test, or of a thread) may not sleep on it nor call Go:
// it panics naming the rule, where it used to make the waits of every
// thread wrong without a word (30 separate Updaters as plain goroutines: 2
// to 16 writers failed in 58 of 60 trials).
func TestVirtualClockRefusesGoroutinesItDoesNotCount(t *testing.T) {
	t.Parallel()
	c := iamtest.NewVirtualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	call := func(name string, f func()) (msg string) {
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { msg = fmt.Sprint(recover()) }()
			f()
		})
		wg.Wait()
		return msg
	}
	check := func(what, msg, op string) {
		t.Helper()
		for _, want := range []string{"VirtualClock." + op, "no thread of the clock", "testing/synctest"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: panic %q, want it to name %q", what, msg, want)
			}
		}
	}
	ctx := context.Background()
	check("go statement of the test", call("sleep", func() { _ = c.Sleep(ctx, time.Second) }), "Sleep")
	check("go statement of the test", call("go", func() { c.Go(ctx, 1, func(context.Context, int) {}) }), "Go")
	c.Go(ctx, 1, func(context.Context, int) {
		check("go statement of a thread, without the thread's context", call("sleep", func() { _ = c.Sleep(ctx, time.Second) }), "Sleep")
	})
	if len(c.Sleeps()) != 0 {
		t.Errorf("refused sleeps moved the clock: %v", c.Sleeps())
	}
	// The maker and Go's threads may: the lone sleep moves the clock.
	if err := c.Sleep(ctx, time.Second); err != nil || len(c.Sleeps()) != 1 {
		t.Errorf("the maker's Sleep: %v, sleeps %v", err, c.Sleeps())
	}
}

// Issue 31, item 7: the test that VirtualClock got wrong (30 writers, each
// with its own Updater over one interceptor-equipped client, adding itself
// to one policy at once) under testing/synctest: every writer lands. The
// Retrier's waits and the fake's latency run on the bubble's wall clock.
func TestSynctestSeparateUpdaters(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		srv.SetLatency(iamtest.AnyMethod, 20*time.Millisecond)
		r, err := interceptor.New()
		if err != nil {
			t.Fatal(err)
		}
		client, err := interceptor.NewClient(ctx, r, iamapi.NewIamPolicyClient, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		const n = 30
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			u, err := policy.NewUpdater(client, r)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				_, errs[i] = u.Update(ctx, "projects/p", policy.AddBinding("roles/viewer", fmt.Sprintf("user:w%d@example.com", i)))
			})
		}
		wg.Wait()
		p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
		if err != nil {
			t.Fatal(err)
		}
		members := 0
		for _, b := range p.GetBindings() {
			members += len(b.GetMembers())
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}
		if members != n {
			t.Errorf("%d members in the policy, want %d", members, n)
		}
		if c := srv.CountCalls(iamtest.MethodSetIamPolicy); c < n {
			t.Errorf("%d writes, want >= %d", c, n)
		}
	})
}
