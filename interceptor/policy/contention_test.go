package policy_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// contentionRun is what one run of N separate Updaters on one policy made.
type contentionRun struct {
	writes    int           // SetIamPolicy calls the fake served
	gaveUp    int           // Updates that returned an error
	allLanded time.Duration // when the last Update returned, on the bubble's clock
	p50       time.Duration // nearest-rank median of the Updates' return times
}

// separateUpdaters runs n Updaters, each its own process in effect (its own
// Retrier, random stream and connection-less Client over one fake), each
// adding its own member to ONE policy at the same moment, with 50 ms from
// a read to its write reaching the fake (the write's latency). It runs in
// a synctest bubble: the Updaters' wall clock and the fake's latency are
// the bubble's, so a minute of backoff takes no real time. It fails t
// unless every change landed exactly once. Updater i draws from the random
// stream (seed, i), or (seed, 0) when same (then with 2 writers the loser's
// waits depend on the seed alone, not on which goroutine won).
func separateUpdaters(t *testing.T, n int, seed uint64, same bool, opts ...policy.Option) contentionRun {
	t.Helper()
	var run contentionRun
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		srv, client := e.srv, e.client
		srv.SetLatency(iamtest.MethodSetIamPolicy, 50*time.Millisecond)

		start := time.Now()
		done := make([]time.Duration, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			var mu sync.Mutex
			stream := uint64(i)
			if same {
				stream = 0
			}
			rng := rand.New(rand.NewPCG(seed, stream))
			r, err := interceptor.New(interceptor.WithRandom(func() float64 {
				mu.Lock()
				defer mu.Unlock()
				return rng.Float64()
			}))
			if err != nil {
				t.Fatal(err)
			}
			u, err := policy.NewUpdater(client, r, opts...)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				_, errs[i] = u.Update(context.Background(), res, policy.AddBinding("roles/viewer", fmt.Sprintf("user:u%d@example.com", i)))
				done[i] = time.Since(start)
			})
		}
		wg.Wait()

		run.writes = srv.CountCalls(iamtest.MethodSetIamPolicy)
		got := members(srv.Policy(res), "roles/viewer")
		for i, err := range errs {
			m := fmt.Sprintf("user:u%d@example.com", i)
			switch {
			case err != nil:
				run.gaveUp++
				if got[m] != 0 {
					t.Errorf("seed %d: updater %d failed (%v) but its change landed", seed, i, err)
				}
			case got[m] != 1:
				t.Errorf("seed %d: updater %d succeeded but its member is in the policy %d times", seed, i, got[m])
			}
		}
		run.allLanded = slices.Max(done)
		slices.Sort(done)
		run.p50 = done[(n+1)/2-1]
	})
	return run
}

// contentionSeeds is how many seeds the contention tests run: 3 by default,
// to stay cheap on CI; IAMRETRY_CONTENTION_SEEDS=20 gives BENCHMARKS.md's
// figures.
func contentionSeeds(t *testing.T) int {
	if s := os.Getenv("IAMRETRY_CONTENTION_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("IAMRETRY_CONTENTION_SEEDS=%q: want a positive count", s)
		}
		return n
	}
	if testing.Short() {
		return 1
	}
	return 3
}

type contentionStats struct {
	gaveUp            int // the most on one seed
	meanWrites, worst float64
	allLanded, p50Med time.Duration
	lastMed           time.Duration // median over seeds of when the last writer landed
}

func contention(t *testing.T, n, seeds int, opts ...policy.Option) contentionStats {
	return contentionSame(t, n, seeds, false, opts...)
}

func contentionSame(t *testing.T, n, seeds int, same bool, opts ...policy.Option) contentionStats {
	var st contentionStats
	var p50s, lasts []time.Duration
	for seed := 1; seed <= seeds; seed++ {
		r := separateUpdaters(t, n, uint64(seed), same, opts...)
		w := float64(r.writes) / float64(n)
		st.meanWrites += w / float64(seeds)
		st.worst = max(st.worst, w)
		st.gaveUp = max(st.gaveUp, r.gaveUp)
		st.allLanded = max(st.allLanded, r.allLanded)
		p50s = append(p50s, r.p50)
		lasts = append(lasts, r.allLanded)
	}
	slices.Sort(p50s)
	slices.Sort(lasts)
	st.p50Med = p50s[len(p50s)/2]
	st.lastMed = lasts[len(lasts)/2]
	return st
}

// TestSeparateUpdatersContention checks the crowd goals of issue 28 with
// the real Updater code: N separate Updaters on one policy, with default
// options, over seeds: no writer gives up on any seed at the default 60 s
// deadline, at most 3.2 writes per writer on average over 20 seeds or more
// and 3.5 on the worst seed, and every writer landed within 30 s (of
// virtual time). Over fewer seeds (3 by default) the mean is left more
// room, 3.3: seeds 1..3 run above the 20 seeds' mean at N = 200 (3.19 to
// 3.20 against 3.15), and goroutine scheduling moves it by 0.01.
func TestSeparateUpdatersContention(t *testing.T) {
	t.Parallel()
	seeds := contentionSeeds(t)
	mean := 3.2
	if seeds < 20 {
		mean = 3.3
	}
	for _, n := range []int{100, 200} {
		st := contention(t, n, seeds)
		t.Logf("N=%d, %d seeds: gave up (most on a seed) %d, writes per writer %.2f mean, %.2f worst; all landed by %.1fs; median p50 %.2fs",
			n, seeds, st.gaveUp, st.meanWrites, st.worst, st.allLanded.Seconds(), st.p50Med.Seconds())
		if st.gaveUp != 0 || st.meanWrites > mean || st.worst > 3.5 {
			t.Errorf("N=%d: gave up %d, writes per writer %.2f mean, %.2f worst; want 0, <= %.1f, <= 3.5", n, st.gaveUp, st.meanWrites, st.worst, mean)
		}
		if st.allLanded > 30*time.Second {
			t.Errorf("N=%d: all landed by %v; want within 30s", n, st.allLanded)
		}
	}
}

// TestSeparateUpdatersFewWriters checks the few-writer goals of issue 28
// with the real Updater code over 5 seeds: with 2 writers both land within
// 5 s on every seed; with 20 and 50 the last lands no later than
// SpreadConflicts' worst in the simulator (27.1 s, 27.0 s). The median
// writer with 5 and 10 (goals of 0.5 s and 1 s, met in the simulator over
// 20 seeds) is logged: over 5 seeds it is left to chance (BENCHMARKS.md
// gives it over 20 and 100).
func TestSeparateUpdatersFewWriters(t *testing.T) {
	t.Parallel()
	seeds := 5
	if s := os.Getenv("IAMRETRY_CONTENTION_SEEDS"); s != "" {
		seeds = contentionSeeds(t)
	}
	for _, tc := range []struct {
		n    int
		last time.Duration // 0: no bound
	}{
		{2, 5 * time.Second},
		{5, 0},
		{10, 0},
		{20, 27100 * time.Millisecond},
		{50, 27 * time.Second},
	} {
		st := contention(t, tc.n, seeds)
		t.Logf("N=%d, %d seeds: median p50 %.2fs; all landed by %.1fs (worst seed); writes per writer %.2f mean",
			tc.n, seeds, st.p50Med.Seconds(), st.allLanded.Seconds(), st.meanWrites)
		if st.gaveUp != 0 || (tc.last > 0 && st.allLanded > tc.last) {
			t.Errorf("N=%d: gave up %d, all landed by %v; want 0, <= %v", tc.n, st.gaveUp, st.allLanded, tc.last)
		}
	}
}

// TestSeparateUpdatersDocumented records the documented schedule's figures
// beside the default's (not a goal: it loses changes at N = 200).
func TestSeparateUpdatersDocumented(t *testing.T) {
	t.Parallel()
	if os.Getenv("IAMRETRY_CONTENTION_SEEDS") == "" {
		t.Skip("the documented schedule's figures: set IAMRETRY_CONTENTION_SEEDS")
	}
	seeds := contentionSeeds(t)
	for _, n := range []int{100, 200} {
		st := contention(t, n, seeds, policy.WithConflictBackoff(interceptor.DocumentedConflicts))
		t.Logf("documented N=%d, %d seeds: gave up (most on a seed) %d, writes per writer %.2f mean, %.2f worst; all landed by %.1fs; median p50 %.2fs",
			n, seeds, st.gaveUp, st.meanWrites, st.worst, st.allLanded.Seconds(), st.p50Med.Seconds())
	}
}
