package herd

import "time"

// base is the un-jittered exponential backoff the strategies share:
// 1 s, 2 s, 4 s, ... capped at 32 s.
func base(n int) time.Duration { return min(time.Duration(1<<min(n, 5))*time.Second, 32*time.Second) }

var (
	// documented is the guidance's min(2^n + random_fraction, 32 s).
	documented = Strategy{Name: "documented", Delay: func(n int, r float64) time.Duration {
		return min(base(n)+time.Duration(r*float64(time.Second)), 32*time.Second)
	}}
	// full is full jitter, U(0, base].
	full = Strategy{Name: "full jitter", Delay: func(n int, r float64) time.Duration {
		b := base(n)
		return b - time.Duration(r*float64(b))
	}}
	// equal is equal jitter, base/2 + U(0, base/2].
	equal = Strategy{Name: "equal jitter", Delay: func(n int, r float64) time.Duration {
		h := base(n) / 2
		return base(n) - time.Duration(r*float64(h))
	}}
	// none is plain exponential backoff.
	none = Strategy{Name: "no jitter", Delay: func(n int, r float64) time.Duration { return base(n) }}

	strategies = []Strategy{documented, full, equal, none}
)

// talk is the scenario of the talk's plot: 1000 clients fail together in a
// 30 s outage, the server then takes 100 calls per 100 ms, and clients give up
// after 300 s (the guidance's figure for CI/CD).
var talk = Config{Clients: 1000, Outage: 30 * time.Second, Capacity: 100, Deadline: 300 * time.Second, Seed: 1}
