package interceptor

import (
	"context"
	"errors"
	"fmt"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/internal/enginehook"
)

// The policy Updater's face of the engine, reached through enginehook (see
// its doc for why it is not public API).
func init() {
	enginehook.NewUpdaterRetrier = newUpdaterRetrier
	enginehook.RunUpdate = runUpdate
	enginehook.CountWrite = countWrite
	enginehook.WithCallers = withCallers
	enginehook.RetriesNotFound = retriesNotFound
}

// retriesNotFound reports whether r retries NOT_FOUND on every call.
func retriesNotFound(r *Retrier) bool { return r.cfg.retryNotFound }

// countWrite counts one SetIamPolicy call of an Updater built on r.
func countWrite(r *Retrier, ctx context.Context) {
	if r.m != nil {
		r.m.write(ctx)
	}
}

// newUpdaterRetrier is New for a policy Updater. An option that does not
// apply to a read-modify-write is refused with an error naming it, never
// ignored: WithPushback (the Updater reads no trailers), WithPerAttemptTimeout
// (its attempts are several calls, each under the caller's context) and
// WithSafeToRetry (a read-modify-write with the etag is always safe to
// rerun). WithConflictBackoff applies only here.
func newUpdaterRetrier(opts ...Option) (*Retrier, error) {
	r, err := build(true, opts)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, name := range r.cfg.given.names(givenPushback | givenPerAttempt | givenSafe) {
		errs = append(errs, fmt.Errorf("iamretry: %s does not apply to a policy Updater (it applies to the interceptor); leave it out", name))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

func runUpdate(r *Retrier, ctx context.Context, method, resource string, judge func(error) (codes.Class, bool), f func(context.Context) error) error {
	return r.do(ctx, &job{method: method, resource: resource, retryConflict: true, deadline: r.cfg.deadline, maxAttempts: r.cfg.maxAttempts, judge: judge}, f)
}
