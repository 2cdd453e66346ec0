package interceptor

import (
	"context"
	"errors"
	"time"

	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// Do runs f, and again after each failure the Retrier retries (classified
// with name as the method) on r's schedule, deadline, cap and budget; the
// caller asserts f is safe to repeat. Do owns f's calls: f must pass its ctx
// on, and an interceptor beneath leaves their retries to Do (do not nest Do,
// WaitVisible or Transact). It returns nil, f's last error unchanged, or, when
// ctx ends during a wait, an error with its code wrapping that. A nil f is
// refused.
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
