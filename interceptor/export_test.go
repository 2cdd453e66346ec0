package interceptor

import "time"

// ConflictDelay gives the external tests the wait of schedule s before the
// rerun that follows conflict n, on the default Backoff, the call's first
// conflict since ago, with no deadline near.
func ConflictDelay(s ConflictBackoff, n int, since time.Duration, r float64) time.Duration {
	return s.delay(DefaultBackoff(), n, since, r, 0)
}
