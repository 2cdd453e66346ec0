package interceptor

import (
	"context"

	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// coalesced wires a Transact run for several callers (an Updater's
// coalesced batch, rmwhook.Run in its context): it tells run how to count
// each caller's call and whether r retries NOT_FOUND, and gives j's end to
// run.Ended instead of the metrics. It reports true for a probe, which runs
// nothing.
func (r *Retrier) coalesced(run *rmwhook.Run, j *job) (probe bool) {
	run.RetryNotFound = r.cfg.retryNotFound
	if r.m != nil {
		m := r.m
		run.Record = func(ctx context.Context, method string, e rmwhook.End) {
			m.ended(ctx, method, e.Err, e.Retries, e.Waited, Reason(e.Reason))
		}
	}
	if run.Probe {
		return true
	}
	j.rmw.ended = run.Ended
	return false
}

// callersOf returns the callers a coalesced batch's context carries
// (rmwhook.Run.Callers), if any.
func callersOf(ctx context.Context) (func() []context.Context, bool) {
	if run := rmwhook.Of(ctx); run != nil && run.Callers != nil {
		return run.Callers, true
	}
	return nil, false
}
