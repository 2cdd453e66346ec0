package interceptor

import (
	"fmt"
	"math"
	"time"
)

// ConflictBackoff is the schedule of a read-modify-write's reruns after a
// concurrent change (ABORTED), given as ReadModifyWrite.Conflicts or to an
// Updater; w is one rerun's measured duration (100 ms until measured).
// Conflicts and transient failures count on exponents of their own; no wait
// exceeds maximum_backoff, and a short deadline narrows the spreading
// schedules' draws. BENCHMARKS.md gives the draws and figures.
type ConflictBackoff uint8

const (
	ScaledConflicts     ConflictBackoff = iota // the default: first waits mostly within 6w, later ones until max(26 s, 100w)
	SpreadConflicts                            // the previous default: first log-uniform in [80 ms, 18 s), later within 27 s
	DocumentedConflicts                        // the Retrier's Backoff, n counting conflicts: crowds reach the deadline
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
