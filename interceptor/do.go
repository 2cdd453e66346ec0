package interceptor

import (
	"context"
	"errors"
	"time"
)

// Do runs f, and runs it again after each failure the way the Retrier
// retries a gRPC call: a failure whose class (the Retrier's classifier,
// WithClassifier, given name as the method; by default codes.OfError, which
// reads gRPC statuses and *googleapi.Error HTTP codes) is Transient, or
// Propagation when WithRetryNotFound is set, waits the same backoff, within
// the same deadline, attempt cap, budget and context, and observers see each
// failed attempt with Method name. Conflict is not retried: a lone write
// must not be replayed after a concurrent change (the policy package reruns
// the whole read-modify-write instead).
//
// The caller asserts that f is safe to run again: Do does not ask the
// safe-to-retry function. Do owns the retries of what f runs: the context
// given to f is marked, and a Retrier's interceptor beneath (on the client f
// calls) passes the failures of marked calls straight through, so retries
// do not multiply beneath Do. f must pass that context on. Owners do not
// yield to each other: a Do, WaitVisible or policy Updater run inside f
// (or a Do inside a Client given to an Updater) retries on its own
// schedule, and the attempts multiply: do not nest owners.
//
// Do returns nil once f succeeds, or the last error f returned, unchanged;
// when ctx ends during a wait, an error whose gRPC code is the context's and
// that wraps f's last error. A nil f is refused with an error.
func (r *Retrier) Do(ctx context.Context, name string, f func(context.Context) error) error {
	r.mustBeBuilt("Retrier.Do")
	if f == nil {
		return errors.New("iamretry: Retrier.Do(" + name + "): f is nil")
	}
	return r.do(ctx, &job{method: name, deadline: r.cfg.deadline, maxAttempts: r.cfg.maxAttempts}, f)
}

// do is the engine's entry for the faces that own what they run (Do,
// WaitVisible and Transact): it marks the context, runs the first attempt and hands a
// failure to the loop.
func (r *Retrier) do(ctx context.Context, j *job, f func(context.Context) error) error {
	if r.budget != nil {
		r.budget.deposit()
	}
	ctx = own(ctx)
	err := f(ctx)
	if err == nil {
		if r.m != nil {
			r.m.succeeded(j.method)
		}
		return nil
	}
	j.again = func(ctx context.Context, _ int, _ time.Duration) error { return f(ctx) }
	return r.run(ctx, j, err)
}
