package interceptor

import (
	"math"
	"testing"
	"time"
)

func TestDelayDocumentedSchedule(t *testing.T) {
	t.Parallel()
	b := DefaultBackoff()
	// min(2^n + r, 32) seconds.
	for n := 0; n < 10; n++ {
		for _, r := range []float64{0, 0.25, 0.5, 0.999} {
			want := min(time.Duration(1<<n)*time.Second+time.Duration(r*float64(time.Second)), 32*time.Second)
			if got := b.Delay(n, r); got != want {
				t.Errorf("Delay(%d, %v) = %v, want %v", n, r, got, want)
			}
		}
	}
}

func TestDelayJitters(t *testing.T) {
	t.Parallel()
	b := Backoff{Initial: time.Second, Multiplier: 2, Max: 10 * time.Second}
	for _, tc := range []struct {
		name   string
		j      Jitter
		n      int
		r      float64
		want   time.Duration
		reason string
	}{
		{"none", NoJitter, 2, 0.7, 4 * time.Second, "base"},
		{"none capped", NoJitter, 5, 0.7, 10 * time.Second, "Max"},
		{"full r=0", FullJitter, 2, 0, 4 * time.Second, "top of (0, base]"},
		{"full r=.75", FullJitter, 2, 0.75, time.Second, "quarter"},
		{"equal r=0", EqualJitter, 2, 0, 4 * time.Second, "base/2 + base/2"},
		{"equal r=.5", EqualJitter, 2, 0.5, 3 * time.Second, "base/2 + base/4"},
		{"additive 1s", AdditiveJitter(time.Second), 1, 0.5, 2500 * time.Millisecond, "2 + .5"},
		{"additive capped", AdditiveJitter(time.Second), 3, 0.9, 8900 * time.Millisecond, "8 + .9"},
		{"additive over Max", AdditiveJitter(5 * time.Second), 3, 0.9, 10 * time.Second, "8 + 4.5 truncated"},
		{"nil is additive 1s", nil, 0, 0.5, 1500 * time.Millisecond, "1 + .5"},
		{"negative jitter clamps", func(time.Duration, float64) time.Duration { return -time.Second }, 0, 0, 0, "never negative"},
	} {
		b.Jitter = tc.j
		if got := b.Delay(tc.n, tc.r); got != tc.want {
			t.Errorf("%s: Delay(%d, %v) = %v, want %v (%s)", tc.name, tc.n, tc.r, got, tc.want, tc.reason)
		}
	}
}

func TestDelayNeverOverflows(t *testing.T) {
	t.Parallel()
	for _, b := range []Backoff{
		DefaultBackoff(),
		{Initial: time.Second, Multiplier: 2, Max: 64 * time.Second, Jitter: FullJitter},
		{Initial: time.Hour, Multiplier: 1e6, Max: maxDuration, Jitter: AdditiveJitter(time.Hour)},
		{Initial: time.Second, Multiplier: 2}, // Max 0: untruncated but bounded
	} {
		for _, n := range []int{-5, 0, 62, 63, 64, 100, 1000, 10_000, math.MaxInt} {
			for _, r := range []float64{0, 0.5, 0.9999999} {
				got := b.Delay(n, r)
				if got < 0 {
					t.Fatalf("%+v Delay(%d, %v) = %v < 0", b, n, r, got)
				}
				if b.Max > 0 && got > b.Max {
					t.Fatalf("%+v Delay(%d, %v) = %v > Max", b, n, r, got)
				}
			}
		}
	}
	if got := DefaultBackoff().Delay(10_000, 0.3); got != 32*time.Second {
		t.Fatalf("Delay(10000) = %v, want Max", got)
	}
}

func FuzzDelay(f *testing.F) {
	f.Add(int64(time.Second), 2.0, int64(32*time.Second), 5, 0.5, uint8(0))
	f.Add(int64(1), 1.0, int64(1), 10_000, 0.999, uint8(1))
	f.Add(int64(time.Hour), 1e300, int64(maxDuration), 1<<40, 0.0, uint8(2))
	f.Fuzz(func(t *testing.T, initial int64, mult float64, max int64, n int, r float64, j uint8) {
		// Only what New accepts: the fuzz checks Delay's promise for valid backoffs.
		if initial <= 0 || max < initial || !(mult >= 1) || math.IsInf(mult, 0) || !(r >= 0 && r < 1) {
			t.Skip()
		}
		b := Backoff{Initial: time.Duration(initial), Multiplier: mult, Max: time.Duration(max)}
		b.Jitter = []Jitter{nil, FullJitter, EqualJitter, NoJitter, AdditiveJitter(time.Duration(initial))}[int(j)%5]
		got := b.Delay(n, r)
		if got < 0 || got > b.Max {
			t.Fatalf("Delay(%d, %v) = %v outside [0, %v]", n, r, got, b.Max)
		}
	})
}
