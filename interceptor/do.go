package interceptor

import (
	"context"
	"errors"
	"time"

	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// Do runs f, and runs it again after each failure the way the Retrier
// retries a gRPC call: a Transient failure (or Propagation with the 404
// opt-in), classified with name as the method, waits the same backoff within
// the same deadline, attempt cap, budget and context; observers see each
// failed attempt with Method name. A Conflict is not retried (Transact
// reruns a whole read-modify-write). The caller asserts f is safe to run
// again. Do owns what f runs: the context given to f is marked, and a
// Retrier's interceptor or RoundTripper beneath passes its failures through.
// f must pass that context on; do not nest owners (Do, WaitVisible, Transact).
//
// Do returns nil once f succeeds, or f's last error unchanged; when ctx ends
// during a wait, an error with the context's code that wraps f's last error.
// A nil f is refused with an error.
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
		switch {
		case j.rmw.ended != nil:
			j.rmw.ended(rmwhook.End{Reason: uint8(Succeeded)})
		case r.m != nil:
			r.m.succeeded(j.method)
		}
		return nil
	}
	j.again = func(ctx context.Context, _ int, _ time.Duration) error { return f(ctx) }
	return r.run(ctx, j, err)
}
