package interceptor

import (
	"fmt"
	"math"
	"time"
)

// ConflictBackoff is the schedule of a policy Updater's reruns after a
// concurrent change (ABORTED: another writer moved the policy's etag between
// the Updater's read and its write). Only those reruns follow it; transient
// failures keep the Retrier's Backoff (the guidance's formula). Give it with
// WithConflictBackoff to policy.NewUpdater; the default is SpreadConflicts.
type ConflictBackoff uint8

const (
	// SpreadConflicts is the Updater's default. The first rerun after a
	// conflict waits a log-uniform time in [50 ms, 30 s) (median 1.22 s,
	// below the documented schedule's 1.5 s; a sixth of the waits are over
	// 10 s, which is what thins out a herd of a hundred writers); each later one
	// waits a uniform time in (0, 15 s] (full jitter, truncated: the
	// exponential base is at its cap at once). No wait is longer than the
	// Retrier's maximum_backoff.
	//
	// It was chosen by simulation (internal/herd, `iamretry simulate
	// --contention`) and checked with separate Updaters over the fake: with
	// N writers on one policy, a write that lands makes every read before it
	// stale, so the reads must be spread thin for writes to land; but with 2
	// or 5 writers the losers should rerun soon. A caller cannot tell the two
	// apart at its first conflict (etags are opaque), so the first wait is
	// heavy-tailed: most callers rerun within a few seconds, some wait long,
	// and the herd thins out. The README's contention table gives the
	// figures beside the documented schedule's.
	SpreadConflicts ConflictBackoff = iota
	// DocumentedConflicts reruns after a conflict on the Retrier's Backoff,
	// exactly as a transient failure is retried (n counts every failed
	// attempt of the call): the guidance's min(2^n + random_fraction,
	// maximum_backoff) by default. Under heavy contention
	// (a hundred writers on one policy) some writers reach the deadline and
	// lose their change; see the README's contention table.
	DocumentedConflicts
)

// String returns the constant's name.
func (s ConflictBackoff) String() string {
	switch s {
	case SpreadConflicts:
		return "SpreadConflicts"
	case DocumentedConflicts:
		return "DocumentedConflicts"
	}
	return fmt.Sprintf("ConflictBackoff(%d)", uint8(s))
}

// The SpreadConflicts schedule.
const (
	spreadFirstMin = 50 * time.Millisecond // the first rerun's shortest wait
	spreadFirstMax = 30 * time.Second      // and its longest
	spreadLaterMax = 15 * time.Second      // later reruns wait (0, this]
)

// Delay returns the wait before the rerun that follows conflict n (n = 0
// for a call's first conflict) given a uniform r in [0, 1), on the default
// Backoff: DocumentedConflicts gives DefaultBackoff().Delay(n, r). It is a
// pure function, and never negative: an r outside [0, 1) is clamped (NaN
// counts as 0). An Updater uses its Retrier's Backoff instead of the
// default (for DocumentedConflicts) and caps every wait at its
// maximum_backoff.
func (s ConflictBackoff) Delay(n int, r float64) time.Duration {
	return s.delay(DefaultBackoff(), n, 0, r)
}

// delay is the wait before the rerun that follows conflict n, on Backoff b,
// when the call's first conflict was since ago.
func (s ConflictBackoff) delay(b Backoff, n int, since time.Duration, r float64) time.Duration {
	if s == DocumentedConflicts {
		return b.Delay(n, r)
	}
	r = unit(r) // min/max let a NaN through, and math.Pow(x, NaN) wraps to a negative wait
	var w time.Duration
	if n <= 0 {
		lo, hi := float64(spreadFirstMin), float64(spreadFirstMax)
		w = saturate(lo * math.Pow(hi/lo, r))
	} else {
		w = FullJitter(spreadLaterMax, r)
	}
	if b.Max > 0 && w > b.Max {
		w = b.Max
	}
	return w
}

// WithConflictBackoff chooses the schedule of a policy Updater's reruns
// after a concurrent change (default SpreadConflicts). It applies only to
// policy.NewUpdater: New, UnaryClientInterceptor and RoundTripper never
// rerun after a conflict, so they refuse it with an error naming it. An
// unknown value is refused too.
func WithConflictBackoff(s ConflictBackoff) Option {
	return func(c *config) {
		c.given |= givenConflict
		if s > DocumentedConflicts {
			c.fail("WithConflictBackoff(%v): unknown schedule; use SpreadConflicts or DocumentedConflicts", s)
			return
		}
		c.conflict = s
	}
}
