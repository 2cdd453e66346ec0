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
