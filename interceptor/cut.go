package interceptor

import (
	"context"
	"errors"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
)

// maxShave bounds how early before an attempt's own deadline a server's
// DEADLINE_EXCEEDED still counts as the attempt running out of its
// per-attempt timeout (see ownDeadline.ranOut).
const maxShave = time.Second

// ownDeadline is the deadline the Retrier's own per-attempt timeout gave one
// attempt, on the wall clock (the one context deadlines run on).
type ownDeadline struct {
	at time.Time
	// shave is how early a server's DEADLINE_EXCEEDED may come and still
	// be taken for this deadline: a tenth of the timeout, at most maxShave.
	shave time.Duration
	// binding is false when the caller's context ends first: then the
	// attempt's end is the caller's, never a cut.
	binding bool
}

// attemptDeadline returns the context of an attempt under a per-attempt
// timeout of d (d > 0) and the deadline it sets.
func attemptDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc, ownDeadline) {
	at := time.Now().Add(d)
	own := ownDeadline{at: at, shave: min(d/10, maxShave), binding: true}
	if pd, ok := ctx.Deadline(); ok && !at.Before(pd) {
		own.binding = false
	}
	actx, cancel := context.WithDeadline(ctx, at)
	return actx, cancel, own
}

// ranOut reports whether an attempt that failed with err (ctx is the
// caller's context) ran out of the Retrier's own per-attempt timeout. It is
// decided by the deadline, not by whether the attempt's context has
// reported it yet (its timer may not have run when the answer comes): a
// failure at or after the attempt's own deadline ran out of it, and so did
// a DEADLINE_EXCEEDED that came at most shave before it (a server that
// shaves the deadline it received, to have its answer back in time). The
// caller's context ending, or its own deadline passing, is never a cut.
func (o ownDeadline) ranOut(ctx context.Context, err error) bool {
	if err == nil || !o.binding || ctx.Err() != nil {
		return false
	}
	now := time.Now()
	if pd, ok := ctx.Deadline(); ok && !now.Before(pd) {
		return false // the caller's deadline passed; its context just has not said so yet
	}
	if !now.Before(o.at) {
		return true
	}
	return !now.Before(o.at.Add(-o.shave)) && isDeadlineExceeded(err)
}

// isDeadlineExceeded reports whether err says a deadline passed: a context's,
// or DEADLINE_EXCEEDED as codes.CodeOf reads it (a gRPC status, a REST 504
// or a JSON error body's status, as a Transact's Read or Write over a REST
// client returns it).
func isDeadlineExceeded(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || codes.CodeOf(err) == grpccodes.DeadlineExceeded
}
