package interceptor_test

import (
	"math"

	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

func TestConflictBackoffDelay(t *testing.T) {
	t.Parallel()
	s := interceptor.SpreadConflicts
	if got := interceptor.ConflictDelay(s, 0, 0, 0); got != 80*time.Millisecond {
		t.Errorf("first rerun at r=0: %v, want 80ms", got)
	}
	// The median: sqrt(80ms * 18s).
	if got := interceptor.ConflictDelay(s, 0, 0, 0.5); got < 1199*time.Millisecond || got > 1201*time.Millisecond {
		t.Errorf("first rerun at r=0.5 (the median): %v, want 1.2s", got)
	}
	// Later reruns: full jitter over what is left of 27 s since the first
	// conflict, at least 1 s.
	windows := []struct {
		since, window time.Duration
	}{
		{-time.Hour, 27 * time.Second}, {0, 27 * time.Second}, {time.Second, 26 * time.Second},
		{20 * time.Second, 7 * time.Second}, {26 * time.Second, time.Second}, {27 * time.Second, time.Second},
		{time.Hour, time.Second}, {math.MaxInt64, time.Second},
	}
	for _, w := range windows {
		if got := interceptor.ConflictDelay(s, 2, w.since, 0); got != w.window {
			t.Errorf("delay(2, %v, 0) = %v, want the whole window %v", w.since, got, w.window)
		}
		if got := interceptor.ConflictDelay(s, 1, w.since, 0.75); got != w.window/4 {
			t.Errorf("delay(1, %v, 0.75) = %v, want %v", w.since, got, w.window/4)
		}
		if got := interceptor.ConflictDelay(s, 0, w.since, 0.5); got != interceptor.ConflictDelay(s, 0, 0, 0.5) {
			t.Errorf("delay(0, %v, 0.5) = %v: the first rerun does not depend on since, want %v", w.since, got, interceptor.ConflictDelay(s, 0, 0, 0.5))
		}
	}
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999} {
		if got := interceptor.ConflictDelay(s, 0, 0, r); got < 80*time.Millisecond || got >= 18*time.Second {
			t.Errorf("first rerun at r=%v: %v, want in [80ms, 18s)", r, got)
		}
		for _, n := range []int{1, 2, 10, 1000} {
			if got := interceptor.ConflictDelay(s, n, 0, r); got <= 0 || got > 27*time.Second {
				t.Errorf("rerun %d at r=%v: %v, want in (0, 27s]", n, r, got)
			}
			if got := interceptor.ConflictDelay(s, n, 30*time.Second, r); got <= 0 || got > time.Second {
				t.Errorf("rerun %d at r=%v 30s after the first conflict: %v, want in (0, 1s]", n, r, got)
			}
		}
		for _, n := range []int{0, 1, 5} {
			if got, want := interceptor.ConflictDelay(interceptor.DocumentedConflicts, n, 0, r), interceptor.DefaultBackoff().Delay(n, r); got != want {
				t.Errorf("DocumentedConflicts delay(%d, %v) = %v, want the default backoff's %v", n, r, got, want)
			}
			if got, want := interceptor.ConflictDelay(interceptor.DocumentedConflicts, n, 10*time.Second, r), interceptor.DefaultBackoff().Delay(n, r); got != want {
				t.Errorf("DocumentedConflicts delay(%d, 10s, %v) = %v, want the default backoff's %v", n, r, got, want)
			}
		}
	}
	if s.String() != "SpreadConflicts" || interceptor.DocumentedConflicts.String() != "DocumentedConflicts" || interceptor.ConflictBackoff(9).String() != "ConflictBackoff(9)" {
		t.Error("String")
	}
}

// TestScaledConflictsDelay (issue 28): the default schedule's windows are
// multiples of w, the rerun's measured duration (100 ms before any):
// the first rerun log-uniform in [3w/4, 6w) with probability 0.6, else
// uniform in [6w, 45w); later ones uniform in (L, W], W what is left of
// T = max(26 s, 100w) after the first conflict (at least max(1 s, 10w)),
// L what is left of T/6; all within 90% of the room before a deadline and
// maximum_backoff.
func TestScaledConflictsDelay(t *testing.T) {
	t.Parallel()
	s := interceptor.ScaledConflicts
	var zero interceptor.ConflictBackoff
	if zero != s || s.String() != "ScaledConflicts" {
		t.Fatalf("the zero ConflictBackoff is %v, want ScaledConflicts the default", zero)
	}
	ms := time.Millisecond
	d := func(n int, since, w time.Duration, r float64, room time.Duration) time.Duration {
		return interceptor.ConflictDelayTook(s, n, since, w, r, room)
	}
	near := func(got, want time.Duration) bool {
		return got >= want-time.Microsecond && got <= want+time.Microsecond
	}
	for _, tc := range []struct {
		name       string
		n          int
		since, w   time.Duration
		r          float64
		room, want time.Duration
	}{
		{"first, unmeasured, r=0: 3w/4 of 100ms", 0, 0, 0, 0, 0, 75 * ms},
		{"first, unmeasured, r=0.6: 6w", 0, 0, 0, 0.6, 0, 600 * ms},
		{"first, unmeasured, r=0.8: halfway through [6w, 45w)", 0, 0, 0, 0.8, 0, 2550 * ms},
		{"first, w=200ms, r=0: 150ms", 0, 0, 200 * ms, 0, 0, 150 * ms},
		{"first, w=200ms, r=0.6: 1.2s", 0, 0, 200 * ms, 0.6, 0, 1200 * ms},
		{"first, w=1s, r=0.99: under maximum_backoff", 0, 0, time.Second, 0.99, 0, 32 * time.Second},
		{"first, room 1s: [6w, 45w) cut to [600ms, 900ms)", 0, 0, 0, 0.99, time.Second, 892500 * time.Microsecond},
		{"later, 1s in, r=0: the whole window, 25s", 1, time.Second, 50 * ms, 0, 0, 25 * time.Second},
		{"later, 1s in, r=0.5: (26/6-1)s + half of the rest", 1, time.Second, 50 * ms, 0.5, 0, 3333333333 + (25*time.Second-3333333333)/2},
		{"later, 10s in, r=0.5: past T/6, half of 16s", 2, 10 * time.Second, 50 * ms, 0.5, 0, 8 * time.Second},
		{"later, 30s in, r=0: the floor 1s", 3, 30 * time.Second, 50 * ms, 0, 0, time.Second},
		{"later, w=500ms: T=50s, 30s in", 3, 30 * time.Second, 500 * ms, 0, 0, 20 * time.Second},
		{"later, 60s in, w=500ms, r=0: the floor 10w", 3, 60 * time.Second, 500 * ms, 0, 0, 5 * time.Second},
		{"later, w=1s: T=100s, under maximum_backoff", 1, time.Second, time.Second, 0, 0, 32 * time.Second},
		{"later, w=200ms, room 20s: 90% of it", 1, time.Second, 200 * ms, 0, 20 * time.Second, 18 * time.Second},
	} {
		if got := d(tc.n, tc.since, tc.w, tc.r, tc.room); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, r := range []float64{0, 0.1, 0.3, 0.59, 0.6, 0.7, 0.9, 0.999999} {
		if got := d(0, 0, 0, r, 0); got < 75*ms || got >= 4500*ms {
			t.Errorf("first rerun at r=%v: %v, want in [75ms, 4.5s)", r, got)
		}
		for _, since := range []time.Duration{0, time.Second, 5 * time.Second, 25 * time.Second, time.Hour} {
			if got := d(1, since, 50*ms, r, 0); got <= 0 || got > max(26*time.Second-since, time.Second) {
				t.Errorf("later rerun %v in at r=%v: %v, want in (0, %v]", since, r, got, max(26*time.Second-since, time.Second))
			}
		}
	}
}
