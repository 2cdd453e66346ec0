package interceptor

import (
	"fmt"
	"math"
	"time"
)

// ConflictBackoff is the schedule of a read-modify-write's reruns after a
// concurrent change (ABORTED: another writer moved the object's etag between
// the read and the write). Only those reruns follow it, on an exponent of
// their own: a conflict never lengthens the wait after a transient failure,
// nor a transient failure the wait after a conflict. Give it as
// ReadModifyWrite.Conflicts, or to an Updater with WithConflictBackoff; the
// default (the zero value) is ScaledConflicts.
type ConflictBackoff uint8

const (
	// ScaledConflicts is the default: its waits are on the scale of w, the
	// read-modify-write's own duration (read to write answered), which
	// Transact measures on each rerun (100 ms until it has; an Update that
	// succeeds at once reads no clock). The first rerun waits, with
	// probability 0.6, a log-uniform time in [3w/4, 6w), else a uniform one
	// in [6w, 45w); each later one a uniform time in (L, W], W what is left of
	// the horizon T = max(26 s, 100w) after the call's first conflict (at
	// least max(1 s, 10w)), L what is left of T/6 (0 once past it). A
	// deadline shorter than that and maximum_backoff bound it as for
	// SpreadConflicts. BENCHMARKS.md gives the figures.
	ScaledConflicts ConflictBackoff = iota
	// SpreadConflicts was the default before ScaledConflicts. The first
	// rerun after a conflict waits a log-uniform time in [80 ms, 18 s)
	// (median 1.2 s); each later one a uniform time in (0, W], W what is left
	// of 27 s after the call's first conflict, at least 1 s. Under a
	// deadline shorter than that, each wait is drawn within 90% of the time
	// left. No wait is longer than the Retrier's maximum_backoff.
	SpreadConflicts
	// DocumentedConflicts reruns after a conflict on the Retrier's Backoff:
	// the guidance's min(2^n + random_fraction, maximum_backoff) by default,
	// n counting the call's conflicts only (0 for the first rerun; transient
	// failures have their own n). Under heavy contention (a hundred writers
	// on one policy) some writers reach the deadline and lose their change;
	// see BENCHMARKS.md's contention table.
	DocumentedConflicts
)

// String returns the constant's name.
func (s ConflictBackoff) String() string {
	switch s {
	case ScaledConflicts:
		return "ScaledConflicts"
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

// The ScaledConflicts schedule, in units of w (the read-modify-write's
// measured duration; defaultRMW until measured).
const (
	defaultRMW         = 100 * time.Millisecond
	minRMW             = 10 * time.Millisecond // a rerun timed shorter counts as this long
	scaledNear         = 0.6                   // the chance the first rerun draws from [3w/4, 6w)
	scaledNearEnd      = 6                     // its log-uniform part ends at 6w
	scaledFirstEnd     = 45                    // its uniform part [6w, 45w)
	scaledHorizon      = 26 * time.Second
	scaledHorizonW     = 100 // the horizon is at least 100w
	scaledLaterFloor   = time.Second
	scaledLaterFloorW  = 10 // later windows are at least 10w wide
	scaledAvoidDivisor = 6  // later reruns skip what is left of T/6
)

// delay is the wait before the rerun that follows conflict n (n from 0,
// counting conflicts only), on Backoff b, when the call's first conflict
// was since ago and the rerun that conflicted took w (0: not measured).
// room, when > 0, is the time left before the call's earlier deadline (its
// retry deadline or its context's): the spreading schedules then draw
// their wait within 90% of it (the rest is for the rerun itself), so that a
// deadline shorter than their windows spreads the reruns over the time
// there is instead of ending the call with a wait that would not fit, which
// would lose the change. The documented schedule is left as it is.
func (s ConflictBackoff) delay(b Backoff, n int, since, w time.Duration, r float64, room time.Duration) time.Duration {
	if s == DocumentedConflicts {
		return b.Delay(n, r)
	}
	r = unit(r) // min/max let a NaN through, and math.Pow(x, NaN) wraps to a negative wait
	fit := maxDuration
	if room > 0 {
		fit = room - room/10
	}
	since = max(since, 0)
	var d time.Duration
	if s == ScaledConflicts {
		d = scaledDelay(n, since, w, r, fit)
	} else {
		d = spreadDelay(n, since, r, fit)
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}

// spreadDelay is SpreadConflicts' wait, within fit.
func spreadDelay(n int, since time.Duration, r float64, fit time.Duration) time.Duration {
	if n <= 0 {
		return logUniform(spreadFirstMin, min(spreadFirstMax, fit), r)
	}
	return FullJitter(min(max(spreadLaterFloor, spreadHorizon-since), fit), r)
}

// scaledDelay is ScaledConflicts' wait, within fit.
func scaledDelay(n int, since, w time.Duration, r float64, fit time.Duration) time.Duration {
	if w <= 0 {
		w = defaultRMW
	}
	w = min(w, time.Hour) // keeps the multiples below from overflowing
	if n <= 0 {
		near, end := scaledNearEnd*w, scaledFirstEnd*w
		if r < scaledNear {
			return logUniform(w*3/4, min(near, fit), r/scaledNear)
		}
		lo, hi := min(near, fit), min(end, fit)
		return lo + saturate(float64(hi-lo)*(r-scaledNear)/(1-scaledNear))
	}
	t := max(scaledHorizon, scaledHorizonW*w)
	window := min(max(t-since, scaledLaterFloor, scaledLaterFloorW*w), fit)
	floor := min(max(scaledLaterFloor, scaledLaterFloorW*w), window)
	lo := min(max(t/scaledAvoidDivisor-since, 0), window-floor)
	return lo + FullJitter(window-lo, r)
}

// logUniform draws log-uniformly in [lo, hi) (hi > lo > 0), or, when hi is
// not above lo, uniformly in (0, hi].
func logUniform(lo, hi time.Duration, r float64) time.Duration {
	if hi > lo {
		return saturate(float64(lo) * math.Pow(float64(hi)/float64(lo), r))
	}
	return FullJitter(hi, r)
}
