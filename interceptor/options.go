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

// Defaults of a Retrier built without options.
const (
	// DefaultDeadline bounds how long a call keeps retrying, counted from its
	// first failure. The guidance leaves it to the use case (it gives 300 s
	// for a CI/CD pipeline); 60 s suits a request path that a person waits on.
	DefaultDeadline = 60 * time.Second
)

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

// Option configures a Retrier (New, UnaryClientInterceptor), and so every
// face that runs on it (the RoundTripper, Do, WaitVisible, Transact and the
// policy Updater). Options apply in order; a later one overrides an
// earlier one, except that WithMaxBackoff wins over a WithBackoff's Max
// either way. An invalid option is never ignored: New returns an error
// that names it.
type Option func(*config)

func (c *config) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("iamretry: "+format, args...))
}

// WithBackoff sets the backoff schedule. Initial must be > 0, Multiplier a
// finite number >= 1, Max >= Initial; a nil Jitter is the documented one,
// AdditiveJitter(time.Second). The default is DefaultBackoff(). A
// WithMaxBackoff replaces b.Max, whichever of the two comes first.
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

// WithMaxBackoff sets the guidance's maximum_backoff, the longest wait
// between two attempts (default 32 s). It must be > 0 and not below the
// backoff's Initial. It wins over a WithBackoff's Max, before or after it.
func WithMaxBackoff(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.fail("WithMaxBackoff(%v): the maximum backoff must be > 0 (the guidance: 32s or 64s)", d)
			return
		}
		c.maxBackoff = d
	}
}

// WithDeadline sets how long a call keeps retrying, counted from its first
// failure (default 60 s; the guidance's "deadline"). A wait that would end
// after it is not started: the call ends at once with the server's last
// error. 0 means no deadline of the Retrier's own (then only the context's
// deadline and WithMaxAttempts stop retries: give the calls a context
// deadline). It must not be negative. A call's own context deadline, when
// sooner, always wins.
func WithDeadline(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithDeadline(%v): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)", d)
			return
		}
		c.deadline = d
	}
}

// WithMaxAttempts caps the number of attempts per call, the first attempt
// included: WithMaxAttempts(1) never retries, WithMaxAttempts(3) retries at
// most twice. 0 (the default) means no cap: the deadline rules. It must not
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

// WithPerAttemptTimeout gives each attempt its own timeout: min(d, what is
// left of the call's context and of the retry deadline). An attempt it cuts
// off (one that failed at its deadline, or with DEADLINE_EXCEEDED or 504 at
// most a tenth of d, at most 1 s, before it) is retried while the caller's
// context lives, whatever the classifier says. A wait that would end at the
// retry deadline is not started. Under Transact it bounds each Read and
// Write. 0 (the default) means none; it must not be negative. It runs on
// the wall clock and costs a context and a timer per attempt.
func WithPerAttemptTimeout(d time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.fail("WithPerAttemptTimeout(%v): the per-attempt timeout must be >= 0 (0: none)", d)
			return
		}
		c.perAttempt = d
	}
}

// WithRetryNotFound makes every call retry NOT_FOUND (HTTP 404), which IAM
// answers while a resource just created is not visible yet (its reads are
// eventually consistent). Without it, only calls that pass RetryNotFound()
// retry NOT_FOUND. Prefer the per-call option where the calls include
// deletes (see RetryNotFound).
func WithRetryNotFound() Option {
	return func(c *config) { c.retryNotFound = true }
}

// WithClassifier replaces the function that sorts failures into retry
// classes (default: codes.OfError, whatever the method). It must not be nil.
// Whatever it says, the Retrier never retries once the caller's context has
// ended, retries Conflict only in a read-modify-write (Transact), and retries an attempt
// its own per-attempt timeout cut off. The method it is given is the gRPC
// method, the name given to Retrier.Do, or a Transact's Method
// (policy.UpdateMethod for an Updater).
func WithClassifier(f func(method string, err error) codes.Class) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithClassifier(nil): give a classifier, or leave the option out for codes.OfError")
			return
		}
		c.classify = f
	}
}

// WithSafeToRetry replaces the function that says whether a request may be
// sent again (default: SafeToRetry, the IAM method table). It must not be nil.
// It also decides the RoundTripper's requests that map to no gRPC method,
// named "VERB /path" as Attempt.Method reports them, with the *http.Request
// as req (do not read its Body; GetBody gives a copy).
func WithSafeToRetry(f func(method string, req any) bool) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithSafeToRetry(nil): give a function, or leave the option out for SafeToRetry")
			return
		}
		c.safe = f
	}
}

// WithClock sets the time source for deadlines and waits (default: the wall
// clock). Tests pass a virtual clock. It must not be nil.
func WithClock(clk Clock) Option {
	return func(c *config) {
		if clk == nil {
			c.fail("WithClock(nil): give a Clock, or leave the option out for the wall clock")
			return
		}
		c.clock = clk
	}
}

// WithRandom sets the source of the jitter's random fraction: a function
// returning a uniform float64 in [0, 1), called once per retry. It must be
// safe for concurrent use and not nil. The default is math/rand/v2.Float64.
func WithRandom(f func() float64) Option {
	return func(c *config) {
		if f == nil {
			c.fail("WithRandom(nil): give a function returning [0,1), or leave the option out for math/rand/v2.Float64")
			return
		}
		c.random = f
	}
}

// WithObserver adds a function called after every failed attempt, with the
// call's context (so that it can log with the caller's trace and values) and
// what was decided (see Attempt), and once more when a call that was retried
// ends: its give-up (Retrying false), or Reason Succeeded with Err nil. A
// call that succeeds at once reports nothing, so the success path stays
// free. For a coalesced Updater batch the context carries the values of
// the caller that leads the batch (the first queued). Several observers are called in the order
// they were added, synchronously, on the calling goroutine: keep them fast.
// It must not be nil.
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
