package interceptor

import "time"

// ConflictDelay gives the external tests the wait of schedule s before the
// rerun that follows conflict n, on the default Backoff, the call's first
// conflict since ago, with no deadline near and no rerun timed yet.
func ConflictDelay(s ConflictBackoff, n int, since time.Duration, r float64) time.Duration {
	return s.delay(DefaultBackoff(), n, since, 0, r, 0)
}

// ConflictDelayTook is ConflictDelay after a rerun that took w, with room
// left before the deadline (0: none near).
func ConflictDelayTook(s ConflictBackoff, n int, since, w time.Duration, r float64, room time.Duration) time.Duration {
	return s.delay(DefaultBackoff(), n, since, w, r, room)
}

// QuotaDelay is the wait after a call's quota rejection k without a server
// delay.
func QuotaDelay(k int, r float64) time.Duration { return quotaDelay(k, r) }
