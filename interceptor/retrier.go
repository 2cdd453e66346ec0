package interceptor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
	"github.com/iamretry/iamretry/internal/googleerr"
)

// Retrier retries failed IAM calls with truncated exponential backoff with
// jitter. Build one with New and share it (immutable, safe for concurrent use;
// its calls share a budget). A Retrier not built by New panics or is refused.
type Retrier struct {
	cfg    config
	budget *budget  // nil: no budget
	m      *metrics // nil: no MeterProvider (WithMeterProvider)
	slow   bool     // every call takes interceptSlow: per-attempt timeout or pushback
	// stack is the stacked-layers detector (stacked.go): failure path only,
	// kept last, away from what the success path reads.
	stack stackTable
}

// New builds a Retrier from opts applied over the defaults (DefaultBackoff,
// DefaultDeadline, no attempt cap, the wall clock). It refuses every invalid
// option with an error naming each.
func New(opts ...Option) (*Retrier, error) {
	return build(opts)
}

// build is New.
func build(opts []Option) (*Retrier, error) {
	c := defaultConfig()
	for i, o := range opts {
		if o == nil {
			c.fail("option %d of %d is nil", i+1, len(opts))
			continue
		}
		o(&c)
	}
	c.validate()
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	r := &Retrier{cfg: c, slow: c.perAttempt > 0 || c.pushback}
	if !c.budgetOff {
		r.budget = newBudget(c.budgetRatio, c.budgetPerSecond)
	}
	if c.meterProvider != nil {
		m, err := newMetrics(c.meterProvider)
		if err != nil {
			return nil, err
		}
		r.m = m
	}
	return r, nil
}

// Backoff returns the Retrier's backoff schedule.
func (r *Retrier) Backoff() Backoff {
	r.mustBeBuilt("Retrier.Backoff")
	return r.cfg.backoff
}

// Clock returns the clock r waits on. Wait on it too between steps of your
// own (polling an operation in a Transact's Write) so that a test's virtual
// clock governs every wait.
func (r *Retrier) Clock() Clock {
	r.mustBeBuilt("Retrier.Clock")
	return r.cfg.clock
}

// built reports whether r was built by New (or a face's build): only such
// a Retrier has a clock, since New refuses a nil one.
func (r *Retrier) built() bool { return r != nil && r.cfg.clock != nil }

// errNotBuilt is what every face says of a Retrier not built by New: the
// panics of its methods wrap it (mustBeBuilt), and WaitVisible, Transact,
// NewClient, NewRESTClient and the NewUpdaters return it.
var errNotBuilt = errors.New("the Retrier was not built by interceptor.New (a zero or nil Retrier has no schedule, clock, classifier or budget): build it with interceptor.New")

// mustBeBuilt panics, naming method, unless r was built by New.
func (r *Retrier) mustBeBuilt(method string) {
	if !r.built() {
		panicNotBuilt(method)
	}
}

// panicNotBuilt panics with errNotBuilt, naming method (an error, so that
// the Updaters' constructors can return what it wraps).
func panicNotBuilt(method string) {
	panic(fmt.Errorf("iamretry: %s: %w", method, errNotBuilt))
}

// job is one operation the engine retries, whichever face it came through:
// a gRPC call (interceptor.go), a function given to Do (do.go), or a
// read-modify-write (transact.go). It is the one small
// per-call value the loop reads; the face fills it.
type job struct {
	method        string // Attempt.Method
	resource      string // Attempt.Resource
	disabled      bool   // Disable() was passed
	retryNotFound bool
	// quotas counts the retries after a quota rejection (their own
	// exponent: quotaDelay); transients the retries after any other
	// failure but a conflict since the last conflict (the Backoff's n: a
	// conflict proves the server answered both the read and the write).
	quotas, transients int
	// rmw is what the engine knows of a read-modify-write (Transact,
	// transact.go): its reruns after a conflict. Zero on the other faces.
	rmw rmwJob
	// deadline and maxAttempts are the call's retry deadline and attempt
	// cap: the Retrier's, or the call's own (CallDeadline, CallMaxAttempts).
	deadline    time.Duration
	maxAttempts int
	// pinDeadline and pinMaxAttempts: a gRPC CallOption set deadline or
	// maxAttempts, so the context forms (DeadlineContext,
	// MaxAttemptsContext) do not override them (applyKnobs).
	pinDeadline, pinMaxAttempts bool
	// perAttempt is each attempt's timeout (the Retrier's, or the call's
	// own); 0: none. The engine gives each retry its timeout
	// (attemptTimeout); a face applies it.
	perAttempt time.Duration
	// start is when the call's first failure was seen: set by the engine
	// (run), zero before; the retry deadline counts from it.
	start time.Time
	// cut reports whether the last attempt was cut off by the Retrier's own
	// per-attempt timeout while the caller's context lived; nil: never.
	cut func() bool
	// face is the gRPC call or REST request the job retries; nil for the
	// faces that own what they run (Do, WaitVisible, Transact): they vouch
	// that it may be sent again, and the server's word on the wait is in
	// their errors.
	face face
	// again runs attempt n (n >= 2) under the timeout d (0: none) and
	// returns its error.
	again func(ctx context.Context, n int, d time.Duration) error
	// once: the request cannot be sent again (the REST face streamed its
	// body): a failure that would be retried ends with BodyNotReplayable.
	once bool
	// judge, when set, classifies an attempt's error before the Retrier's
	// classifier does; ok false leaves err to the classifier. The
	// visibility wait (visible.go) uses it for what only it retries.
	judge func(err error) (class codes.Class, ok bool)
	// step, when set, gives the Backoff step of the wait that follows the
	// attempt just judged (the default is n-1: every attempt failed), and
	// whether that wait confirms a success rather than retrying a failure
	// (it then spends no budget, and is reported as Confirming, no retry):
	// the visibility wait counts only its failed reads, and spaces its good
	// ones by the first step.
	step func() (n int, confirm bool)
}

// face is what the engine asks of a gRPC call or a REST request after an
// attempt failed (a pointer: no allocation to hand it over).
type face interface {
	// safe says whether the request may be sent again after an ambiguous
	// failure: the gRPC face asks the safe-to-retry function; the REST face
	// maps the request to its gRPC method, or goes by HTTP semantics.
	safe() bool
	// serverWait returns the server's word on the wait after the last
	// attempt that only the face can read (RetryInfo in the error is read
	// by the engine for every face): gRPC's A6 trailer (WithPushback) sets
	// the wait or forbids the retry; REST's Retry-After is a floor.
	serverWait() (time.Duration, pushbackState)
	// message is the call's request (the gRPC request message, or the
	// *http.Request), for the stacked-layers detector (stacked.go).
	message() any
}

// run is the retry engine: it retries j after its first attempt failed with
// err, and returns nil once an attempt succeeds or the error to give the
// caller: the last error an attempt returned, unchanged, or, when the
// context ended during a wait, an error that carries the context's code and
// wraps that last error. Each failure is decided (decide), scheduled against
// the attempt cap, the deadlines and the budget (schedule), and observed
// (observe: observers, logger, span events); the call's end is observed
// once more when it was retried, and recorded (end: metrics).
func (r *Retrier) run(ctx context.Context, j *job, err error) error {
	c := &r.cfg
	applyKnobs(ctx, j) // the context forms: read only now, after a failure
	start := c.clock.Now()
	j.start = start
	r.stackCheck(ctx, j, start) // a layer above retrying what was given up?
	now := start
	var waited time.Duration // waiting to retry, for retry_delay
	retries := 0             // the waits that retried a failure (not Confirming)
	for n := 1; ; n++ {
		a := Attempt{Method: j.method, Resource: j.resource, N: n, Err: err, Elapsed: now.Sub(start)}
		a.Class, a.Reason = r.decide(ctx, j, err)
		if a.Reason == Retry {
			a.Reason = r.schedule(ctx, j, start, now, n, &a)
		}
		if a.Reason == Confirming {
			// A good read short of the count: reported as what it is, no
			// failure (its error only tells the engine to read again).
			good := a
			good.Err, good.Class = nil, codes.Permanent
			r.observe(ctx, &good)
		} else {
			r.observe(ctx, &a)
		}
		if !a.Retrying {
			r.stackGaveUp(ctx, j, &a, now)
			r.end(ctx, j, &a, retries, waited)
			return err
		}
		serr := c.clock.Sleep(ctx, a.Wait)
		if serr == nil {
			// A context that ended as the wait did (the wall clock's timer
			// and ctx.Done race in one select) ends the call as a wait it
			// cut short: no attempt is sent after the caller cancelled.
			serr = ctx.Err()
		}
		if serr != nil {
			werr := interrupted(ctx, serr, err)
			t := c.clock.Now()
			if a.Reason == Retry {
				waited += t.Sub(now)
			}
			a.Err, a.Wait, a.Retrying, a.Reason = werr, 0, false, ContextDone
			a.Elapsed = t.Sub(start)
			r.observe(ctx, &a)
			r.end(ctx, j, &a, retries, waited)
			return werr
		}
		if a.Reason == Retry {
			waited += a.Wait
			retries++
		}
		if a.Class == codes.Conflict && r.m != nil {
			r.m.conflict(ctx, j.method)
		}
		var began time.Time
		if j.rmw.on {
			began = c.clock.Now() // the conflict schedule scales to the rerun's duration
		}
		if err = j.again(ctx, n+1, r.attemptTimeout(j)); err == nil {
			done := Attempt{Method: j.method, Resource: j.resource, N: n + 1, Reason: Succeeded, Elapsed: c.clock.Now().Sub(start)}
			if retries > 0 {
				// The final report: only calls that were retried get one
				// (a WaitVisible whose reads all succeeded was not).
				r.observe(ctx, &done)
			}
			r.end(ctx, j, &done, retries, waited)
			return nil
		}
		now = c.clock.Now()
		if j.rmw.on {
			j.rmw.took = max(now.Sub(began), minRMW)
		}
	}
}

// end records the end of a call that failed at least once: retries is how
// many retries it made, waited the time it spent waiting between attempts.
func (r *Retrier) end(ctx context.Context, j *job, a *Attempt, retries int, waited time.Duration) {
	if r.m == nil && j.rmw.ended == nil {
		return
	}
	reason := a.Reason
	if reason == ContextDone && !givesUp(a) {
		reason = NotRetryable // not a give-up: the error was not retryable anyway
	}
	if j.rmw.ended != nil { // a transaction that counts its callers' calls itself
		j.rmw.ended(rmwhook.End{Err: a.Err, Retries: retries, Waited: waited, Reason: uint8(reason)})
		return
	}
	r.m.ended(ctx, j.method, a.Err, retries, waited, reason)
}

// decide classifies err and says whether its kind may be retried at all.
func (r *Retrier) decide(ctx context.Context, j *job, err error) (codes.Class, Reason) {
	class, judged := codes.Permanent, false
	if j.judge != nil {
		class, judged = j.judge(err)
	}
	if !judged {
		class = r.cfg.classify(j.method, err)
	}
	if j.cut != nil && j.cut() && ctx.Err() == nil {
		// The Retrier's own per-attempt timeout cut the attempt off: that is
		// transient whatever the classifier says, while the caller's context
		// lives (WithPerAttemptTimeout promises it).
		class = codes.Transient
	}
	switch {
	case ctx.Err() != nil:
		// The caller's own deadline passed or it cancelled: a retry cannot
		// help, whatever the error says (a DEADLINE_EXCEEDED is only
		// transient while the caller's context lives).
		return class, ContextDone
	case j.disabled && !(class == codes.Conflict && j.rmw.on):
		// Disabled stops retries, never a read-modify-write's reruns
		// after a conflict: those are the transaction itself.
		return class, Disabled
	}
	switch class {
	case codes.Transient:
		// An ambiguous outcome: the server may have acted. Only a request
		// that is safe to send again is retried, unless the failure is a
		// definite rejection (quota).
		if isQuota(err) {
			break
		}
		if j.face != nil && !j.face.safe() {
			return class, Unsafe
		}
	case codes.Propagation:
		// A definite rejection (NOT_FOUND): nothing was done, so a retry
		// is safe even for a method unsafe to replay; it is opt-in.
		if !j.retryNotFound && !r.cfg.retryNotFound {
			return class, NotRetryable
		}
	case codes.Conflict:
		if !j.rmw.on {
			return class, NotRetryable
		}
	default:
		return class, NotRetryable
	}
	if j.once {
		return class, BodyNotReplayable
	}
	return class, Retry
}

// attemptTimeout is the timeout of an attempt that starts now (or of
// each call of a read-modify-write's attempt): j's per-attempt timeout, cut
// to what is left of the retry deadline once the first failure started it,
// and at least a nanosecond (an attempt with no time left fails at once);
// 0: none.
func (r *Retrier) attemptTimeout(j *job) time.Duration {
	d := j.perAttempt
	if d > 0 && j.deadline > 0 && !j.start.IsZero() {
		d = max(min(d, j.start.Add(j.deadline).Sub(r.cfg.clock.Now())), time.Nanosecond)
	}
	return d
}

// room is the time left at now before j's earlier deadline: its retry
// deadline (counted from start) or its context's; maxDuration when it has
// neither.
func (j *job) room(ctx context.Context, start, now time.Time) time.Duration {
	r := maxDuration
	if j.deadline > 0 {
		r = min(r, start.Add(j.deadline).Sub(now))
	}
	if dl, ok := ctx.Deadline(); ok {
		r = min(r, dl.Sub(now))
	}
	return r
}

// fitLastRetry shortens a read-modify-write's wait after a transient
// failure that would end past its earlier deadline to half the time left,
// when that is at least the Backoff's Initial: giving up with time left
// would lose the change (the conflict schedules fit the time left too).
// So the last retries halve what is left, no closer than Initial apart; a
// shorter room leaves the wait as it is (the call ends).
func (r *Retrier) fitLastRetry(ctx context.Context, j *job, start, now time.Time, wait time.Duration) time.Duration {
	room := j.room(ctx, start, now)
	if wait < room {
		return wait
	}
	if fit := room / 2; fit >= r.cfg.backoff.Initial {
		return fit
	}
	return wait
}

// schedule picks the wait before attempt n+1 and checks it against the
// attempt cap and both deadlines. It fills a.Wait and a.Retrying when the
// wait may be started; a wait that would end after a deadline is never
// started.
func (r *Retrier) schedule(ctx context.Context, j *job, start, now time.Time, n int, a *Attempt) Reason {
	c := &r.cfg
	if j.maxAttempts > 0 && a.Class != codes.Conflict && n-j.rmw.reruns >= j.maxAttempts {
		return MaxAttempts
	}
	// Each kind of failure has its own exponent: a conflict's is the
	// call's conflicts (conflictWait), a quota rejection's its quota
	// rejections; every other failure's counts the failures that are
	// neither since the last conflict.
	var wait time.Duration
	confirm := false
	quota := a.Class == codes.Transient && isQuota(a.Err)
	switch {
	case j.step != nil:
		var k int
		k, confirm = j.step()
		wait = c.backoff.Delay(k, c.random())
	case a.Class == codes.Conflict:
		wait = r.conflictWait(ctx, j, start, now)
	case quota && !serverDelay(j, a.Err):
		wait = quotaDelay(j.quotas, c.random())
	case quota: // the server's delay below is the floor
		wait = c.backoff.Delay(j.quotas, c.random())
	default:
		wait = c.backoff.Delay(j.transients, c.random())
		if j.rmw.on {
			wait = r.fitLastRetry(ctx, j, start, now, wait)
		}
	}
	// The server's word: A6's trailer sets the wait, or forbids the retry;
	// RetryInfo is a floor under whichever wait applies.
	var word time.Duration
	state := pushbackNone
	if j.face != nil {
		word, state = j.face.serverWait()
	}
	switch state {
	case pushbackWait:
		wait = word
	case pushbackStop:
		return ServerPushback
	case pushbackFloor:
		wait = max(wait, word)
	}
	if d, ok := googleerr.RetryDelay(a.Err); ok && d > wait {
		wait = d
	}
	if d, ok := googleerr.ErrRetryAfter(a.Err, now); ok && d > wait {
		wait = d // a REST error's Retry-After, under Do or an Updater too
	}
	end := now.Add(wait)
	if j.deadline > 0 {
		// With a per-attempt timeout (cut set) the attempt after the wait
		// runs within the retry deadline: a wait that ends at it would
		// leave that attempt no time at all, so it is not started either.
		if dl := start.Add(j.deadline); end.After(dl) || (j.cut != nil && !end.Before(dl)) {
			return DeadlineReached
		}
	}
	if dl, ok := ctx.Deadline(); ok && !end.Before(dl) {
		return ContextDeadline
	}
	// Conflict reruns do not spend the budget: contention is bounded by the
	// backoff and the deadline, and refusing them would lose the change.
	// Nor do the waits that confirm a success (a visibility wait's good
	// reads): they retry no failure.
	if r.budget != nil && a.Class != codes.Conflict && !confirm && !r.budget.withdraw(now) {
		return BudgetExhausted
	}
	switch {
	case a.Class == codes.Conflict:
		j.rmw.reruns++
		j.transients = 0 // the read and the write got through: the outage, if any, is over
	case quota:
		j.quotas++
	case j.step == nil:
		j.transients++
	}
	a.Wait, a.Retrying = wait, true
	if confirm {
		return Confirming
	}
	return Retry
}

// interruptedError is returned when the caller's context ends during a wait
// between attempts. Its gRPC code is the context's (CANCELED or
// DEADLINE_EXCEEDED) and it wraps both the context error and the last error
// the server sent, so errors.Is finds either.
type interruptedError struct {
	ctxErr error
	last   error
}

func interrupted(ctx context.Context, sleepErr, last error) error {
	ce := ctx.Err()
	if ce == nil {
		ce = sleepErr // a Clock that failed on its own
	}
	return &interruptedError{ctxErr: ce, last: last}
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("iamretry: %v while waiting to retry; last error: %v", e.ctxErr, e.last)
}

func (e *interruptedError) Unwrap() []error { return []error{e.ctxErr, e.last} }

// GRPCStatus gives the error the context's code, so status.Code(err) is
// CANCELED or DEADLINE_EXCEEDED, as gRPC itself reports an ended context.
func (e *interruptedError) GRPCStatus() *status.Status {
	return status.New(status.FromContextError(e.ctxErr).Code(), e.Error())
}
