package interceptor

import (
	"math"
	"time"
)

// maxDuration is the longest time.Duration; Delay never goes past it.
const maxDuration = time.Duration(math.MaxInt64)

// Jitter spreads a wait around its base so that clients that failed together
// do not retry together: given retry n's truncated base and a fresh uniform r
// in [0, 1), it returns the wait, which Backoff.Delay clamps into [0, Max].
type Jitter func(base time.Duration, r float64) time.Duration

// AdditiveJitter returns the guidance's jitter, base plus a random fraction of
// max, in [base, base+max); DefaultBackoff's max is 1 s.
func AdditiveJitter(max time.Duration) Jitter {
	m := float64(max)
	return func(base time.Duration, r float64) time.Duration {
		add := saturate(r * m)
		if add > maxDuration-base { // saturate instead of wrapping negative
			return maxDuration
		}
		return base + add
	}
}

// FullJitter waits a uniform time in (0, base]: the widest spread, but a retry
// can come almost at once.
var FullJitter Jitter = func(base time.Duration, r float64) time.Duration {
	w := saturate((1 - r) * float64(base))
	if w <= 0 && base > 0 {
		return 1 // r near 1 rounds below a nanosecond: the interval is open at 0
	}
	return w
}

// EqualJitter waits base/2 plus a uniform time in (0, base/2].
var EqualJitter Jitter = func(base time.Duration, r float64) time.Duration {
	half := float64(base) / 2
	return saturate(half + (1-r)*half)
}

// NoJitter waits exactly the base: only for a single client (tests, scripts).
var NoJitter Jitter = func(base time.Duration, _ float64) time.Duration {
	return base
}

// defaultJitter is the documented jitter, built once.
var defaultJitter = AdditiveJitter(time.Second)

// Backoff is truncated exponential backoff with jitter: retry n (from 0)
// waits min(Jitter(min(Initial*Multiplier^n, Max), r), Max), which with
// DefaultBackoff is the guidance's min(2^n + random_fraction,
// maximum_backoff) seconds.
type Backoff struct {
	Initial    time.Duration // the first retry's base; > 0
	Multiplier float64       // grows the base from one retry to the next; >= 1
	Max        time.Duration // the guidance's maximum_backoff; >= Initial
	Jitter     Jitter        // nil: AdditiveJitter(time.Second)
}

// DefaultBackoff returns the guidance's backoff: Initial 1 s, Multiplier 2,
// Max 32 s, and a random fraction of a second added to each wait.
func DefaultBackoff() Backoff {
	return Backoff{Initial: time.Second, Multiplier: 2, Max: 32 * time.Second, Jitter: defaultJitter}
}

// Delay returns the wait before retry n (from 0) for a uniform r in [0, 1),
// purely. An r outside [0, 1) is clamped, a negative n counts as 0; the wait
// is never negative, above Max (when Max > 0), or an overflow, whatever n.
func (b Backoff) Delay(n int, r float64) time.Duration {
	if n < 0 {
		n = 0
	}
	limit := b.Max
	if limit <= 0 {
		limit = maxDuration
	}
	base := limit
	// Initial*Multiplier^n, stopped early once it reaches the limit (it only
	// grows, since Multiplier >= 1 is required by New; a Multiplier below 1
	// or NaN given directly to Delay is treated the same way, never negative).
	f := float64(b.Initial) * math.Pow(b.Multiplier, float64(n))
	if f >= 0 && f < float64(limit) {
		base = time.Duration(f)
	} else if !(f >= 0) { // NaN or negative
		base = 0
	}
	j := b.Jitter
	if j == nil {
		j = defaultJitter
	}
	w := j(base, unit(r))
	switch {
	case w < 0:
		return 0
	case w > limit:
		return limit
	}
	return w
}

// belowOne is the largest float64 below 1.
const belowOne = 1 - 1.0/(1<<53)

// unit clamps a random draw into [0, 1): NaN and negatives to 0, 1 and
// above (+Inf among them) to the largest float64 below 1.
func unit(r float64) float64 {
	switch {
	case r >= 0 && r < 1:
		return r
	case r >= 1:
		return belowOne
	}
	return 0
}

// saturate converts f nanoseconds to a Duration without wrapping: float64
// rounds MaxInt64 up to 2^63, whose conversion to int64 is undefined (it
// gives MinInt64 on amd64), so the largest bases came out as waits of 0.
// NaN gives 0.
func saturate(f float64) time.Duration {
	switch {
	case f >= float64(maxDuration): // 2^63
		return maxDuration
	case f <= math.MinInt64:
		return math.MinInt64
	case f != f: // NaN
		return 0
	}
	return time.Duration(f)
}
