package interceptor

import (
	"fmt"
	"math"
	"time"
)

// ConflictBackoff is the schedule of a read-modify-write's reruns after a
// concurrent change (ABORTED: another writer moved the object's etag between
// the read and the write). Only those reruns follow it; transient failures
// keep the Retrier's Backoff (the guidance's formula). Give it as
// ReadModifyWrite.Conflicts, or to a policy Updater with
// policy.WithConflictBackoff; the default (the zero value) is
// SpreadConflicts.
type ConflictBackoff uint8

const (
	// SpreadConflicts is the Updater's default. The first rerun after a
	// conflict waits a log-uniform time in [80 ms, 18 s) (median 1.2 s);
	// each later one a uniform time in (0, W], W what is left of 27 s after
	// the call's first conflict, at least 1 s. Under a deadline shorter than
	// that, each wait is drawn within 90% of the time left. No wait is
	// longer than the Retrier's maximum_backoff. The package doc's
	// "Conflicts" says why.
	SpreadConflicts ConflictBackoff = iota
	// DocumentedConflicts reruns after a conflict on the Retrier's Backoff,
	// exactly as a transient failure is retried (n counts every failed
	// attempt of the call): the guidance's min(2^n + random_fraction,
	// maximum_backoff) by default. Under heavy contention
	// (a hundred writers on one policy) some writers reach the deadline and
	// lose their change; see BENCHMARKS.md's contention table.
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

// known reports whether s is one of the schedules.
func (s ConflictBackoff) known() bool { return s <= DocumentedConflicts }

// The SpreadConflicts schedule.
const (
	spreadFirstMin   = 80 * time.Millisecond // the first rerun's shortest wait
	spreadFirstMax   = 18 * time.Second      // and its longest
	spreadHorizon    = 27 * time.Second      // later reruns aim to end by this long after the first conflict
	spreadLaterFloor = time.Second           // but wait up to at least this
)

// delay is the wait before the rerun that follows conflict n, on Backoff b,
// when the call's first conflict was since ago. room, when > 0, is the time
// left before the call's earlier deadline (its retry deadline or its
// context's): SpreadConflicts then draws its wait within 90% of it (the
// rest is for the rerun itself), so that a deadline shorter than the
// schedule's windows spreads the reruns over the time there is instead of
// ending the call with a wait that would not fit, which would lose the
// change. The documented schedule is left as it is.
func (s ConflictBackoff) delay(b Backoff, n int, since time.Duration, r float64, room time.Duration) time.Duration {
	if s == DocumentedConflicts {
		return b.Delay(n, r)
	}
	r = unit(r) // min/max let a NaN through, and math.Pow(x, NaN) wraps to a negative wait
	fit := maxDuration
	if room > 0 {
		fit = room - room/10
	}
	var w time.Duration
	if n <= 0 {
		lo, hi := spreadFirstMin, min(spreadFirstMax, fit)
		if hi > lo {
			w = saturate(float64(lo) * math.Pow(float64(hi)/float64(lo), r))
		} else {
			w = FullJitter(hi, r)
		}
	} else {
		w = FullJitter(min(max(spreadLaterFloor, spreadHorizon-max(since, 0)), fit), r)
	}
	if b.Max > 0 && w > b.Max {
		w = b.Max
	}
	return w
}
