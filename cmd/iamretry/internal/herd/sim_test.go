package herd

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustSimulate(t testing.TB, cfg Config, s Strategy) Result {
	t.Helper()
	r, err := Simulate(context.Background(), cfg, s)
	if err != nil {
		t.Fatalf("Simulate(context.Background(), %+v, %s): %v", cfg, s.Name, err)
	}
	return r
}

func TestSimulateDeterministic(t *testing.T) {
	cfg := talk
	cfg.Start = 2 * time.Second
	for _, s := range strategies {
		a, b := mustSimulate(t, cfg, s), mustSimulate(t, cfg, s)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with seed %d differ:\n%+v\n%+v", s.Name, cfg.Seed, a, b)
		}
	}
	for _, s := range []Strategy{documented, full} {
		cfg2 := cfg
		cfg2.Seed++
		a, b := mustSimulate(t, cfg, s), mustSimulate(t, cfg2, s)
		if slices.Equal(a.Series, b.Series) {
			t.Errorf("%s: seeds %d and %d give the same series", s.Name, cfg.Seed, cfg2.Seed)
		}
	}
}

func TestSimulateInvariants(t *testing.T) {
	cfgs := []Config{
		talk,
		{Outage: 10 * time.Second}, // defaults, no capacity limit
		{Clients: 500, Capacity: 20, Start: 5 * time.Second, Seed: 7},            // overload only
		{Clients: 300, Outage: time.Minute, Deadline: 20 * time.Second, Seed: 3}, // everyone gives up
		{Clients: 1},
	}
	for _, cfg := range cfgs {
		for _, s := range strategies {
			r := mustSimulate(t, cfg, s)
			clients := cfg.Clients
			if clients == 0 {
				clients = DefaultClients
			}
			sum, peak := 0, 0
			for _, n := range r.Series {
				sum += n
				peak = max(peak, n)
			}
			if r.Calls != sum {
				t.Errorf("%+v %s: Calls = %d, sum(Series) = %d", cfg, s.Name, r.Calls, sum)
			}
			if r.Peak != peak {
				t.Errorf("%+v %s: Peak = %d, max(Series) = %d", cfg, s.Name, r.Peak, peak)
			}
			if r.Succeeded+r.GaveUp != clients {
				t.Errorf("%+v %s: Succeeded %d + GaveUp %d != %d clients", cfg, s.Name, r.Succeeded, r.GaveUp, clients)
			}
			if r.Calls < clients || r.RetryPeak > r.Peak {
				t.Errorf("%+v %s: Calls %d < clients %d or RetryPeak %d > Peak %d", cfg, s.Name, r.Calls, clients, r.RetryPeak, r.Peak)
			}
			if len(r.Series) > 0 && r.Series[len(r.Series)-1] == 0 {
				t.Errorf("%+v %s: Series ends in a zero", cfg, s.Name)
			}
			if !(r.P50 <= r.P99 && r.P99 <= r.AllDone) {
				t.Errorf("%+v %s: want P50 %v <= P99 %v <= AllDone %v", cfg, s.Name, r.P50, r.P99, r.AllDone)
			}
			if last := time.Duration(len(r.Series)) * Tick; r.AllDone >= last || r.AllDone < last-Tick {
				t.Errorf("%+v %s: AllDone %v is not in the last tick of Series (%d ticks)", cfg, s.Name, r.AllDone, len(r.Series))
			}
			if cfg.Outage > 0 && cfg.Deadline == 0 && r.GaveUp != 0 {
				t.Errorf("%+v %s: %d gave up with no deadline", cfg, s.Name, r.GaveUp)
			}
		}
	}
}

// TestSimulateEveryoneGivesUp checks the deadline rule: with a 60 s outage
// and a 20 s deadline nobody gets through, and nobody waits past its
// deadline: documented waits are 1, 2, 4, 8 s (+ jitter), so every client
// calls at 0, ~1, ~3, ~7, ~15 s and gives up before ~31 s.
func TestSimulateEveryoneGivesUp(t *testing.T) {
	r := mustSimulate(t, Config{Clients: 200, Outage: time.Minute, Deadline: 20 * time.Second}, documented)
	if r.GaveUp != 200 || r.Succeeded != 0 || r.Calls != 5*200 {
		t.Errorf("got GaveUp %d, Succeeded %d, Calls %d; want 200, 0, 1000", r.GaveUp, r.Succeeded, r.Calls)
	}
	if r.AllDone > 20*time.Second {
		t.Errorf("AllDone = %v, after the 20 s deadline", r.AllDone)
	}
}

// TestSimulateServerRules checks the server on a case worked by hand: 250
// clients at t = 0 with no outage and capacity 100: 100 succeed at once, the
// other 150 retry after exactly 1 s (no jitter), 100 succeed, 50 retry after
// 2 s and succeed.
func TestSimulateServerRules(t *testing.T) {
	r := mustSimulate(t, Config{Clients: 250, Capacity: 100}, none)
	want := make([]int, 31)
	want[0], want[10], want[30] = 250, 150, 50
	if !slices.Equal(r.Series, want) {
		t.Errorf("Series = %v, want %v", r.Series, want)
	}
	if r.Calls != 450 || r.Succeeded != 250 || r.AllDone != 3*time.Second || r.P50 != time.Second {
		t.Errorf("got %+v", r)
	}
}

// TestHerd is the point of the package: clients that fail together and retry
// without jitter come back together, in waves as big as the whole herd; with
// jitter the same clients spread out.
func TestHerd(t *testing.T) {
	herd := mustSimulate(t, talk, none)
	if herd.RetryPeak != talk.Clients {
		t.Errorf("no jitter: RetryPeak = %d, want all %d clients in one wave", herd.RetryPeak, talk.Clients)
	}
	for _, s := range []Strategy{documented, full, equal} {
		r := mustSimulate(t, talk, s)
		ratio := float64(herd.RetryPeak) / float64(r.RetryPeak)
		t.Logf("%s: RetryPeak %d, no jitter %d: %.1fx", s.Name, r.RetryPeak, herd.RetryPeak, ratio)
		if ratio < 3 {
			t.Errorf("%s: RetryPeak %d; want at most a third of no jitter's %d", s.Name, r.RetryPeak, herd.RetryPeak)
		}
		if r.AllDone >= herd.AllDone || r.GaveUp > herd.GaveUp {
			t.Errorf("%s: AllDone %v, GaveUp %d; want sooner and fewer than no jitter's %v, %d", s.Name, r.AllDone, r.GaveUp, herd.AllDone, herd.GaveUp)
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	zero := Strategy{Name: "zero", Delay: func(int, float64) time.Duration { return 0 }}
	negative := Strategy{Name: "negative", Delay: func(int, float64) time.Duration { return -time.Second }}
	forever := Strategy{Name: "forever", Delay: func(int, float64) time.Duration { return 1000 * time.Hour }}
	tests := []struct {
		cfg  Config
		s    Strategy
		want string
	}{
		{Config{Clients: -1}, documented, "Config.Clients is -1"},
		{Config{Clients: MaxClients + 1}, documented, "Config.Clients"},
		{Config{Outage: -time.Second}, documented, "Config.Outage is -1s"},
		{Config{Outage: 25 * time.Hour}, documented, "Config.Outage"},
		{Config{Capacity: -5}, documented, "Config.Capacity is -5"},
		{Config{Deadline: -time.Second}, documented, "Config.Deadline is -1s"},
		{Config{Start: -time.Second}, documented, "Config.Start is -1s"},
		{Config{}, Strategy{Delay: documented.Delay}, "Strategy.Name is empty"},
		{Config{}, Strategy{Name: "x"}, `strategy "x" has no Delay`},
		{Config{Clients: 2, Outage: time.Second}, negative, "negative delay"},
		{Config{Clients: 2, Outage: time.Second}, zero, "calls without succeeding"},
		{Config{Clients: 2, Outage: time.Second, Deadline: time.Second}, zero, "calls without succeeding"}, // the deadline never comes
		{Config{Clients: 2, Outage: time.Second}, forever, "horizon"},
	}
	for _, tt := range tests {
		_, err := Simulate(context.Background(), tt.cfg, tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Simulate(context.Background(), %+v, %s) = %v, want an error containing %q", tt.cfg, tt.s.Name, err, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := make([]time.Duration, 1000)
	for i := range ds {
		ds[i] = time.Duration(1000-i) * time.Millisecond
	}
	if got := percentile(ds, 0.99); got != 990*time.Millisecond {
		t.Errorf("p99 = %v, want 990ms", got)
	}
	if got := percentile(ds, 0.5); got != 500*time.Millisecond {
		t.Errorf("p50 = %v, want 500ms", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

func BenchmarkSimulate1000(b *testing.B) {
	for b.Loop() {
		if _, err := Simulate(context.Background(), talk, documented); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSimulate10000(b *testing.B) {
	cfg := talk
	cfg.Clients = 10_000
	for b.Loop() {
		if _, err := Simulate(context.Background(), cfg, documented); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSimulationsStopWhenContextEnds: both simulators stop, with the
// context's error, when their context has ended, however long the run
// would be (a million clients that never give up).
func TestSimulationsStopWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := Strategy{Name: "s", Delay: func(n int, r float64) time.Duration { return time.Second }}
	if _, err := Simulate(ctx, Config{Clients: MaxClients, Outage: time.Hour}, s); !errors.Is(err, context.Canceled) {
		t.Errorf("Simulate with an ended context: %v, want context.Canceled", err)
	}
	if _, err := SimulateContention(ctx, ContentionConfig{Clients: MaxClients}, s); !errors.Is(err, context.Canceled) {
		t.Errorf("SimulateContention with an ended context: %v, want context.Canceled", err)
	}
}
