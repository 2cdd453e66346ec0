package interceptor_test

import (
	"context"
	"math"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

const longest = time.Duration(math.MaxInt64)

// Each jitter promises a range for r in [0, 1): Full (0, base], Equal
// (base/2, base], Additive [base, base+max), None base. The promise must hold
// at the largest base too, where float64(base) rounds above MaxInt64.
func TestJitterRangesAtTheLargestBase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		j      interceptor.Jitter
		lo, hi time.Duration // inclusive bounds of the wait for base = longest
	}{
		{"full", interceptor.FullJitter, 1, longest},
		{"equal", interceptor.EqualJitter, longest / 2, longest},
		{"additive", interceptor.AdditiveJitter(time.Second), longest, longest},
		{"none", interceptor.NoJitter, longest, longest},
	} {
		for _, r := range []float64{0, 0.25, 0.5, math.Nextafter(1, 0)} {
			b := interceptor.Backoff{Initial: time.Second, Multiplier: 2, Max: longest, Jitter: tc.j}
			for _, n := range []int{63, 100, math.MaxInt} {
				if got := b.Delay(n, r); got < tc.lo || got > tc.hi {
					t.Errorf("%s: Delay(%d, %v) with Max = MaxInt64 = %v, want in [%v, %v]", tc.name, n, r, got, tc.lo, tc.hi)
				}
			}
			// Max <= 0: not truncated, and never overflows (so never wraps to 0).
			b.Max = 0
			if got := b.Delay(1000, r); got < tc.lo || got > tc.hi {
				t.Errorf("%s: Delay(1000, %v) with Max = 0 = %v, want in [%v, %v]", tc.name, r, got, tc.lo, tc.hi)
			}
		}
	}
}

// New refuses every Backoff whose Multiplier is not a finite number >= 1,
// and Initial/Max at their extremes.
func TestBackoffExtremesRefused(t *testing.T) {
	t.Parallel()
	for _, b := range []interceptor.Backoff{
		{Initial: time.Second, Multiplier: math.Inf(1), Max: time.Minute},
		{Initial: time.Second, Multiplier: math.NaN(), Max: time.Minute},
		{Initial: time.Second, Multiplier: math.Inf(-1), Max: time.Minute},
		{Initial: time.Second, Multiplier: 0.999, Max: time.Minute},
		{Initial: -1, Multiplier: 2, Max: time.Minute},
		{Initial: time.Minute, Multiplier: 2, Max: time.Second},
		{Initial: time.Second, Multiplier: 2, Max: -1},
	} {
		if _, err := interceptor.New(interceptor.WithBackoff(b)); err == nil {
			t.Errorf("New(WithBackoff(%+v)) accepted", b)
		}
	}
	// The extremes that are valid are accepted and schedule sane waits.
	b := interceptor.Backoff{Initial: 1, Multiplier: math.MaxFloat64, Max: longest, Jitter: interceptor.NoJitter}
	if _, err := interceptor.New(interceptor.WithBackoff(b)); err != nil {
		t.Fatal(err)
	}
	if got := b.Delay(1, 0); got != longest {
		t.Errorf("Delay(1) with Multiplier MaxFloat64 = %v, want MaxInt64", got)
	}
}

// A random source that breaks its contract ([0, 1)) must not turn the
// schedule into a retry storm: the wait stays within what the jitter
// promises for r in [0, 1).
func TestRandomOutsideUnitInterval(t *testing.T) {
	t.Parallel()
	for _, rnd := range []float64{1, 1.5, -0.5, math.NaN(), math.Inf(1), math.Inf(-1), 1e30, -1e30} {
		for _, tc := range []struct {
			name   string
			j      interceptor.Jitter
			lo, hi time.Duration // bounds of the first wait, base 1 s
		}{
			{"additive", nil, time.Second, 2 * time.Second},
			{"full", interceptor.FullJitter, 1, time.Second},
			{"equal", interceptor.EqualJitter, time.Second / 2, time.Second},
		} {
			clock := vclock.New()
			var waits []time.Duration
			r, err := interceptor.New(
				interceptor.WithClock(clock),
				interceptor.WithRandom(func() float64 { return rnd }),
				interceptor.WithBackoff(interceptor.Backoff{Initial: time.Second, Multiplier: 2, Max: 32 * time.Second, Jitter: tc.j}),
				interceptor.WithMaxAttempts(2),
				interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
					if a.Retrying {
						waits = append(waits, a.Wait)
					}
				}),
			)
			if err != nil {
				t.Fatal(err)
			}
			s := &script{errs: fail(grpccodes.Unavailable, 1)}
			if err := callWith(r, s.invoke); err != nil {
				t.Fatal(err)
			}
			if len(waits) != 1 || waits[0] < tc.lo || waits[0] > tc.hi {
				t.Errorf("%s jitter, random() = %v: waits %v, want one in [%v, %v]", tc.name, rnd, waits, tc.lo, tc.hi)
			}
		}
	}
}

// The conflict schedule clamps r too: a NaN or 1 from a broken source
// must not give a negative or zero wait.
func TestConflictDelayRandomOutsideUnitInterval(t *testing.T) {
	t.Parallel()
	for _, rnd := range []float64{1, math.NaN(), math.Inf(1), -1} {
		for n := range 3 {
			if got := interceptor.ConflictDelay(interceptor.SpreadConflicts, n, 0, rnd); got <= 0 || got > 32*time.Second {
				t.Errorf("SpreadConflicts delay(%d, %v) = %v, want in (0, 32s]", n, rnd, got)
			}
		}
	}
}
