// Package rmwhook is what the engine (package interceptor) and the
// Updaters' coalescing core (interceptor/internal/updaters) tell each other
// through a Transact's context, so that a read-modify-write run for several
// callers sends its span events to each of them and each caller's call is
// counted once with its own outcome, without any of it in the public API.
package rmwhook

import (
	"context"
	"time"
)

// End is how one call ended, as the Retrier's metrics count it.
type End struct {
	Err     error         // nil: it succeeded
	Retries int           // attempts after the first
	Waited  time.Duration // time spent waiting between attempts
	Reason  uint8         // an interceptor.Reason
}

// Run is a Transact run for several callers. The engine fills Record and
// RetryNotFound when Transact starts; with Probe set, Transact then returns
// at once, doing nothing else.
type Run struct {
	// Callers returns the contexts of the callers still waiting: each failed
	// attempt's span event goes to each one's span. Nil: Transact's ctx.
	Callers func() []context.Context
	// Ended, when set, is given how the Transact ended (once, unless a panic
	// ends it), and the engine then counts no call of its own.
	Ended func(End)
	// Probe: fill Record and RetryNotFound, run nothing.
	Probe bool

	// Record counts one call of method that ended as e in the Retrier's
	// metrics; nil when the Retrier has none.
	Record func(ctx context.Context, method string, e End)
	// RetryNotFound: the Retrier retries NOT_FOUND on every call
	// (WithRetryNotFound).
	RetryNotFound bool
}

type key struct{}

// With returns ctx carrying run.
func With(ctx context.Context, run *Run) context.Context {
	return context.WithValue(ctx, key{}, run)
}

// Of returns the Run ctx carries, or nil.
func Of(ctx context.Context) *Run {
	run, _ := ctx.Value(key{}).(*Run)
	return run
}
