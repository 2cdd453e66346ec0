package herd

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestContentionEveryWriteLandsOnce(t *testing.T) {
	for _, cfg := range []ContentionConfig{
		{Clients: 200, Seed: 1},
		{Clients: 50, Start: time.Second, Seed: 2},
		{Clients: 1},
		{}, // defaults
	} {
		for _, s := range strategies {
			r, landed, err := simulateContention(context.Background(), cfg, s)
			if err != nil {
				t.Fatalf("%+v %s: %v", cfg, s.Name, err)
			}
			clients := r.Config.Clients
			for i, n := range landed {
				if n != 1 {
					t.Errorf("%+v %s: client %d landed %d writes, want 1", cfg, s.Name, i, n)
				}
			}
			if r.Landed != clients || r.GaveUp != 0 || r.Writes != r.Landed+r.Conflicts {
				t.Errorf("%+v %s: Landed %d, GaveUp %d, Writes %d, Conflicts %d; want %d landed, none given up, Writes = Landed + Conflicts",
					cfg, s.Name, r.Landed, r.GaveUp, r.Writes, r.Conflicts, clients)
			}
			if clients > 1 && cfg.Start == 0 && r.Conflicts == 0 {
				t.Errorf("%+v %s: no conflicts among %d clients reading at once", cfg, s.Name, clients)
			}
			if clients == 1 && (r.Conflicts != 0 || r.AllLanded != DefaultService) {
				t.Errorf("%+v %s: a lone client: Conflicts %d, AllLanded %v; want 0, %v", cfg, s.Name, r.Conflicts, r.AllLanded, DefaultService)
			}
			if !(r.P50 <= r.P99 && r.P99 <= r.AllLanded) {
				t.Errorf("%+v %s: want P50 %v <= P99 %v <= AllLanded %v", cfg, s.Name, r.P50, r.P99, r.AllLanded)
			}
			// Writes land at least Service apart from when their read was
			// issued, and one at a time: N writes need at least one Service.
			if r.AllLanded < r.Config.Service {
				t.Errorf("%+v %s: AllLanded %v < one service time", cfg, s.Name, r.AllLanded)
			}
		}
	}
}

// TestContentionByHand checks a case worked by hand: 3 clients read at 0;
// at 50 ms one write lands and two conflict; with no jitter both rerun at
// 1.05 s, one lands at 1.1 s, the other conflicts and reruns at 3.1 s
// (wait 2 s), landing at 3.15 s.
func TestContentionByHand(t *testing.T) {
	r, err := SimulateContention(context.Background(), ContentionConfig{Clients: 3}, none)
	if err != nil {
		t.Fatal(err)
	}
	want := ContentionResult{
		Strategy: none.Name, Config: ContentionConfig{Clients: 3, Service: 50 * time.Millisecond},
		Writes: 6, Landed: 3, Conflicts: 3,
		AllLanded: 3150 * time.Millisecond, P50: 1100 * time.Millisecond, P99: 3150 * time.Millisecond,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("got  %+v\nwant %+v", r, want)
	}
}

func TestContentionDeterministicAndJitterHelps(t *testing.T) {
	cfg := ContentionConfig{Clients: 100, Seed: 42}
	a, _ := SimulateContention(context.Background(), cfg, documented)
	b, _ := SimulateContention(context.Background(), cfg, documented)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	cfg.Seed++
	if c, _ := SimulateContention(context.Background(), cfg, documented); reflect.DeepEqual(a.P50, c.P50) && a.Conflicts == c.Conflicts {
		t.Errorf("seeds 42 and 43 give the same result: %+v", c)
	}
	// Without jitter the herd rereads together every time and only one write
	// per round lands: conflicts grow as N^2/2.
	herd, _ := SimulateContention(context.Background(), ContentionConfig{Clients: 100, Seed: 42}, none)
	if herd.Conflicts != 100*99/2 {
		t.Errorf("no jitter: Conflicts = %d, want %d", herd.Conflicts, 100*99/2)
	}
	if a.Conflicts*2 > herd.Conflicts {
		t.Errorf("documented: Conflicts = %d; want under half of no jitter's %d", a.Conflicts, herd.Conflicts)
	}
}

func TestContentionDeadline(t *testing.T) {
	r, landed, err := simulateContention(context.Background(), ContentionConfig{Clients: 100, Deadline: 10 * time.Second}, none)
	if err != nil {
		t.Fatal(err)
	}
	// No jitter: one write lands per round, at 0.05, 1.1, 3.15 and 7.2 s; the
	// next wait, 8 s from 7.2 s, would end past the first conflict (0.05 s)
	// plus 10 s, so the other 96 give up then.
	if r.Landed != 4 || r.GaveUp != 96 {
		t.Errorf("Landed %d, GaveUp %d; want 4, 96", r.Landed, r.GaveUp)
	}
	sum := 0
	for _, n := range landed {
		sum += n
	}
	if sum != r.Landed {
		t.Errorf("per-client landings sum to %d, Landed = %d", sum, r.Landed)
	}
}

func TestContentionErrors(t *testing.T) {
	negative := Strategy{Name: "negative", Delay: func(int, float64) time.Duration { return -1 }}
	tests := []struct {
		cfg  ContentionConfig
		s    Strategy
		want string
	}{
		{ContentionConfig{Clients: -3}, documented, "ContentionConfig.Clients is -3"},
		{ContentionConfig{Service: -time.Millisecond}, documented, "ContentionConfig.Service is -1ms"},
		{ContentionConfig{Deadline: -time.Second}, documented, "ContentionConfig.Deadline is -1s"},
		{ContentionConfig{Start: -time.Second}, documented, "ContentionConfig.Start is -1s"},
		{ContentionConfig{}, Strategy{Name: "nil"}, "no Delay"},
		{ContentionConfig{Clients: 2}, negative, "negative delay"},
	}
	for _, tt := range tests {
		_, err := SimulateContention(context.Background(), tt.cfg, tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SimulateContention(context.Background(), %+v, %s) = %v, want an error containing %q", tt.cfg, tt.s.Name, err, tt.want)
		}
	}
}

func BenchmarkSimulateContention100(b *testing.B) {
	for b.Loop() {
		if _, err := SimulateContention(context.Background(), ContentionConfig{Clients: 100, Seed: 1}, documented); err != nil {
			b.Fatal(err)
		}
	}
}

// TestContentionAfterSeesTimeSinceFirstConflict: a strategy's After is used
// instead of Delay and is given the time since the client's first conflict.
// The case of TestContentionByHand: 3 clients read at 0; at 50 ms one lands
// and two conflict (since 0); both rerun 1 s later, one lands at 1.1 s and
// the other conflicts again, 1.05 s after its first conflict.
func TestContentionAfterSeesTimeSinceFirstConflict(t *testing.T) {
	type call struct {
		n     int
		since time.Duration
	}
	var calls []call
	s := Strategy{Name: "after", Delay: func(int, float64) time.Duration { t.Error("Delay called; want After"); return time.Second },
		After: func(n int, since time.Duration, _ float64) time.Duration {
			calls = append(calls, call{n, since})
			return time.Second
		}}
	r, err := SimulateContention(context.Background(), ContentionConfig{Clients: 3}, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []call{{0, 0}, {0, 0}, {1, 1050 * time.Millisecond}}
	if !reflect.DeepEqual(calls, want) || r.AllLanded != 2150*time.Millisecond {
		t.Errorf("After called with %v, all landed %v; want %v, 2.15s", calls, r.AllLanded, want)
	}
	if _, err := SimulateContention(context.Background(), ContentionConfig{Clients: 2}, Strategy{Name: "after only", After: s.After}); err != nil {
		t.Errorf("a strategy with After alone: %v", err)
	}
}
