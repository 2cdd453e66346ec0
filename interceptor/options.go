package interceptor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"go.opentelemetry.io/otel/metric"

	"github.com/iamretry/iamretry/codes"
)

// DefaultDeadline is the retry deadline of a Retrier without WithDeadline,
// counted from a call's first failure.
const DefaultDeadline = 60 * time.Second

// config is what the options set. A Retrier copies it once and never
// changes it, so calls read it without locks.
type config struct {
	backoff       Backoff
	maxBackoff    time.Duration // WithMaxBackoff's, applied over backoff by validate; 0: none
	deadline      time.Duration
	maxAttempts   int
	perAttempt    time.Duration
	retryNotFound bool
	classify      func(method string, err error) codes.Class
	safe          func(method string, req any) bool
	clock         Clock
	random        func() float64
	observers     []func(context.Context, Attempt)
	logger        logging.Logger
	pushback      bool
	meterProvider metric.MeterProvider

	budgetRatio     float64
	budgetPerSecond float64
	budgetOff       bool
	errs            []error
}

func defaultConfig() config {
	return config{
		backoff:  DefaultBackoff(),
		deadline: DefaultDeadline,
		classify: defaultClassify,
		safe:     SafeToRetry,
		clock:    wallClock{},
		random:   rand.Float64,

		budgetRatio:     DefaultBudgetRatio,
		budgetPerSecond: DefaultBudgetPerSecond,
	}
}

func defaultClassify(_ string, err error) codes.Class { return codes.OfError(err) }

// Option configures a Retrier (New). Options apply in order, the later
// winning (but WithMaxBackoff wins over WithBackoff's Max either way); New
// refuses an invalid one with an error naming it.
type Option func(*config)

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("iamretry: "+format, args...))
}

// WithBackoff sets the backoff schedule (default DefaultBackoff()): Initial
// > 0, a finite Multiplier >= 1, Max >= Initial; a nil Jitter is
// AdditiveJitter(time.Second).
func WithBackoff(b Backoff) Option {
	return func(c *config) {
		ok := true
		if b.Initial <= 0 {
			c.fail("WithBackoff: Initial is %v; it must be > 0 (the guidance: 1s)", b.Initial)
			ok = false
		}
		if !(b.Multiplier >= 1) || math.IsInf(b.Multiplier, 0) {
			c.fail("WithBackoff: Multiplier is %v; it must be a finite number >= 1 (the guidance: 2)", b.Multiplier)
			ok = false
		}
		if b.Max <= 0 {
			c.fail("WithBackoff: Max is %v; it must be > 0 (the guidance: 32s or 64s)", b.Max)
			ok = false
		}
		if !ok {
			return
		}
		if b.Jitter == nil {
			b.Jitter = defaultJitter
		}
		c.backoff = b
	}
}

// WithMaxBackoff sets the guidance's maximum_backoff, the longest wait between
// two attempts (default 32 s). It must be > 0 and not below Initial.
func WithMaxBackoff(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("WithMaxBackoff(%v): the maximum backoff must be > 0 (the guidance: 32s or 64s)", d)
			return
		}
		c.maxBackoff = d
	}
}

// WithDeadline sets how long a call keeps retrying from its first failure
// (default DefaultDeadline; 0: none, only the context's deadline and the cap
// stop it; not negative). A wait that would end after it, or after a sooner
// context deadline, is not started: the call ends with the last error.
func WithDeadline(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithDeadline(%v): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)", d)
			return
		}
		c.deadline = d
	}
}

// WithMaxAttempts caps the attempts per call, the first included: 1 never
// retries, 3 retries at most twice, 0 (the default) means no cap. It must not
// be negative.
func WithMaxAttempts(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail("WithMaxAttempts(%d): the attempt count must be >= 0 (0: no cap; 1: no retries)", n)
			return
		}
		c.maxAttempts = n
	}
}

// WithPerAttemptTimeout bounds each attempt (under Transact each Read and
// Write) by min(d, what is left of the context and the retry deadline). An
// attempt it cuts (failed at its deadline, or DEADLINE_EXCEEDED within
// min(d/10, 1 s) of it) is retried while the context lives. 0 (the default):
// none; not negative. It costs a context and a wall-clock timer per attempt.
func WithPerAttemptTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithPerAttemptTimeout(%v): the per-attempt timeout must be >= 0 (0: none)", d)
			return
		}
		c.perAttempt = d
	}
}

// WithRetryNotFound makes every call retry NOT_FOUND (404), as a new
// resource answers until it is visible. Prefer the per-call forms where calls
// include deletes (see RetryNotFound).
func WithRetryNotFound() Option {
	return func(c *config) { c.retryNotFound = true }
}

// WithClassifier replaces the function that sorts failures into retry classes
// (default codes.OfError); method is the gRPC method or a Do's, Transact's
// name. Whatever it says, nothing is retried once the context ended, Conflict
// only in Transact, and an attempt cut by the per-attempt timeout is. Not nil.
func WithClassifier(f func(method string, err error) codes.Class) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithClassifier(nil): give a classifier, or leave the option out for codes.OfError")
			return
		}
		c.classify = f
	}
}

// WithSafeToRetry replaces SafeToRetry, the function that says whether a
// request may be sent again. A REST request that maps to no gRPC method
// comes as "VERB /path" with its *http.Request (read GetBody, not Body). Not
// nil.
func WithSafeToRetry(f func(method string, req any) bool) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithSafeToRetry(nil): give a function, or leave the option out for SafeToRetry")
			return
		}
		c.safe = f
	}
}

// WithClock sets the time source of deadlines and waits (default WallClock()):
// tests pass a virtual one. Not nil.
func WithClock(clk Clock) Option {
	return func(c *config) {
		if clk == nil {
			c.fail("WithClock(nil): give a Clock, or leave the option out for the wall clock")
			return
		}
		c.clock = clk
	}
}

// WithRandom sets the jitter's source of uniform numbers in [0, 1) (default
// math/rand/v2.Float64); f must be safe for concurrent use and not nil.
func WithRandom(f func() float64) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithRandom(nil): give a function returning [0,1), or leave the option out for math/rand/v2.Float64")
			return
		}
		c.random = f
	}
}

// WithObserver adds f, called with the call's context (a coalesced Updater
// batch: its leader's) and an Attempt after every failed attempt, each
// WaitVisible good read short of its count, and the end of a call that was
// retried; never on a call that succeeds at once. Observers run in order, on
// the calling goroutine: keep them fast. Not nil.
func WithObserver(f func(context.Context, Attempt)) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithObserver(nil): give a function, or leave the option out")
			return
		}
		c.observers = append(c.observers, f)
	}
}

// validate checks what no single option can: how options combine.
func (c *config) validate() {
	if c.maxBackoff > 0 {
		c.backoff.Max = c.maxBackoff // whatever the order of WithBackoff and WithMaxBackoff
	}
	if b := c.backoff; b.Max < b.Initial {
		c.fail("the maximum backoff (%v) is less than the backoff's Initial (%v): raise WithMaxBackoff or lower Initial", b.Max, b.Initial)
	}
}
