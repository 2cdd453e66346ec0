package policy_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// spread makes each virtual wait also take a thousandth of its length in
// real time (1 s of backoff: 1 ms), so that contenders on separate virtual
// clocks spread out as real jittered backoff spreads them, instead of all
// retrying at the same real instant. No real wait exceeds 33 ms.
func spread(clk *vclock.Clock) {
	clk.OnSleep(func(d time.Duration) { time.Sleep(d / 1000) })
}

// herdResult counts what n concurrent Updates of one resource cost.
type herdResult struct {
	reads, writes, conflicts int
}

// herd runs n concurrent Updates, each granting its own member, of a fresh
// resource: through one Updater (coalesce) or through n Updaters, one per
// caller, as n processes would. Separate Updaters have their own clocks and
// no retry deadline, so every update lands however long the contention
// lasts. It fails tb unless every grant landed once.
func herd(tb testing.TB, x *env, resource string, n int, coalesce bool) herdResult {
	ups := make([]*policy.Updater, n)
	for i := range ups {
		if coalesce && i > 0 {
			ups[i] = ups[0]
			continue
		}
		clk := vclock.New()
		spread(clk)
		u, err := newUpdater(x.client, interceptor.WithClock(clk), interceptor.WithDeadline(0))
		if err != nil {
			tb.Fatal(err)
		}
		ups[i] = u
	}
	x.srv.ResetCalls()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i, u := range ups {
		wg.Go(func() {
			<-start
			_, err := u.Update(context.Background(), resource, policy.AddBinding("roles/viewer", fmt.Sprintf("user:u%d@example.com", i)))
			if err != nil {
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	if m := members(x.srv.Policy(resource), ""); len(m) != n {
		tb.Fatalf("%d members, want %d", len(m), n)
	}
	var r herdResult
	for _, c := range x.srv.Calls() {
		switch c.Method {
		case iamtest.MethodGetIamPolicy:
			r.reads++
		case iamtest.MethodSetIamPolicy:
			r.writes++
			if c.Code == codes.Aborted {
				r.conflicts++
			}
		}
	}
	return r
}

var herdSizes = []int{10, 50, 200}

// BenchmarkCoalescing reports, for N concurrent updates of one resource,
// the writes (SetIamPolicy calls) and conflicts (ABORTED answers) per N
// updates, with coalescing (one Updater) and without (one Updater per
// caller), on virtual clocks.
func BenchmarkCoalescing(b *testing.B) {
	for _, n := range herdSizes {
		for _, coalesce := range []bool{true, false} {
			mode := "coalesced"
			if !coalesce {
				mode = "separate"
			}
			b.Run(fmt.Sprintf("N=%d/%s", n, mode), func(b *testing.B) {
				x := newEnv(b)
				var total herdResult
				i := 0
				for b.Loop() {
					r := herd(b, x, fmt.Sprintf("projects/bench-%d", i), n, coalesce)
					total.reads += r.reads
					total.writes += r.writes
					total.conflicts += r.conflicts
					i++
				}
				b.ReportMetric(float64(total.writes)/float64(i), "writes/op")
				b.ReportMetric(float64(total.conflicts)/float64(i), "conflicts/op")
				b.ReportMetric(float64(total.reads)/float64(i), "reads/op")
			})
		}
	}
}

// TestCoalescingTable logs, with -v, the table of writes and conflicts for
// N concurrent updates of one resource, with and without coalescing. The
// row of 200 separate Updaters (thousands of read-modify-writes, most of
// the package's time under the race detector) is a measurement for the
// table, made only with -v; every other herd runs and is checked always.
func TestCoalescingTable(t *testing.T) {
	t.Parallel()
	x := newEnv(t)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%6s | %-22s | %-22s\n", "", "coalesced (1 Updater)", "separate (N Updaters)")
	fmt.Fprintf(&b, "%6s | %6s %6s %8s | %6s %6s %8s\n", "N", "reads", "writes", "conflicts", "reads", "writes", "conflicts")
	for _, n := range herdSizes {
		c := herd(t, x, fmt.Sprintf("projects/table-c-%d", n), n, true)
		var s herdResult
		if n <= 50 || testing.Verbose() {
			s = herd(t, x, fmt.Sprintf("projects/table-s-%d", n), n, false)
		}
		fmt.Fprintf(&b, "%6d | %6d %6d %8d | %6d %6d %8d\n", n, c.reads, c.writes, c.conflicts, s.reads, s.writes, s.conflicts)
		if c.conflicts != 0 {
			t.Errorf("N=%d: %d conflicts through one Updater", n, c.conflicts)
		}
	}
	t.Log(b.String())
}
