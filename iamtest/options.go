package iamtest

import (
	"context"
	"errors"
	"time"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// Clock is the fake's source of time: its injected latency waits through
// Sleep, and it reads Now for propagation windows and the Time of logged
// calls. A virtual clock shared with the retrying code under test lets a test
// run hours of backoff in no real time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits d, or until ctx ends, when it returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// Option configures a Server made by NewServer or New.
type Option func(*config) error

// config holds what the options set.
type config struct {
	clock   Clock
	seed    int64
	seedSet bool
}

// WithClock makes the fake read time from c and wait its injected latency
// through c instead of the wall clock. c must be safe for concurrent use.
// A nil c is refused.
func WithClock(c Clock) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("iamtest: WithClock(nil): a Clock is required")
		}
		cfg.clock = c
		return nil
	}
}

// WithSeed seeds the random source behind SetFailureRate and
// SetLostAnswerRate. The same seed and the same sequence of calls give the
// same faults. Without it the seed is 1: a fake is deterministic by default.
func WithSeed(seed int64) Option {
	return func(cfg *config) error {
		cfg.seed, cfg.seedSet = seed, true
		return nil
	}
}

// fakeOptions translates the configuration into fakeiam's options.
func (c config) fakeOptions() []fakeiam.Option {
	var opts []fakeiam.Option
	if c.clock != nil {
		opts = append(opts, fakeiam.WithClock(c.clock.Now), fakeiam.WithSleep(c.clock.Sleep))
	}
	if c.seedSet {
		opts = append(opts, fakeiam.WithSeed(c.seed))
	}
	return opts
}
