package interceptor

import (
	"context"
	"fmt"
	"time"

	"github.com/iamretry/iamretry/interceptor/internal/ctxforms"
)

// The context forms (DisableContext, RetryNotFoundContext, DeadlineContext,
// MaxAttemptsContext) are a ctxforms.Forms value in the context, honoured by
// every face; the engine reads them only after a call failed (Retrier.run),
// so a call that succeeds at once never walks its context. The Updaters
// read the same value to batch only callers that asked the same.

// withFlag returns ctx with the boolean form f set.
func withFlag(ctx context.Context, f ctxforms.Flags) context.Context {
	k := ctxforms.Of(ctx)
	k.Flags |= f
	return ctxforms.With(ctx, k)
}

// DisableContext returns a context under which no face retries (on an Update:
// no transient retries; conflicts still rerun). Context forms are read only
// after a failure: a call that succeeds at once pays nothing.
func DisableContext(ctx context.Context) context.Context {
	return withFlag(ctx, ctxforms.Disable)
}

// RetryNotFoundContext returns a context under which every face retries 404
// NOT_FOUND, for a read that follows a create (on an Update, a grant to a
// member not visible yet). Not for a delete (see RetryNotFound).
func RetryNotFoundContext(ctx context.Context) context.Context {
	return withFlag(ctx, ctxforms.NotFound)
}

// DeadlineContext returns a context that sets the retry deadline of its calls
// on every face, in place of WithDeadline's (0: none of its own). A sooner
// context deadline, or a CallDeadline, wins. A negative d panics.
func DeadlineContext(ctx context.Context, d time.Duration) context.Context {
	if d < 0 {
		panic(fmt.Sprintf("iamretry: DeadlineContext(ctx, %v): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)", d))
	}
	k := ctxforms.Of(ctx)
	k.Deadline, k.HasDeadline = d, true
	return ctxforms.With(ctx, k)
}

// MaxAttemptsContext returns a context that caps the attempts of its calls,
// the first included, on every face, in place of WithMaxAttempts's (1: no
// retry, 0: no cap); on an Update reruns after a conflict do not count. A
// CallMaxAttempts wins. A negative n panics.
func MaxAttemptsContext(ctx context.Context, n int) context.Context {
	if n < 0 {
		panic(fmt.Sprintf("iamretry: MaxAttemptsContext(ctx, %d): the attempt count must be >= 0 (0: no cap; 1: no retries)", n))
	}
	k := ctxforms.Of(ctx)
	k.MaxAttempts, k.HasMaxAttempts = n, true
	return ctxforms.With(ctx, k)
}

// applyKnobs folds the context forms of ctx into j, where the face did not
// pin the value from a gRPC CallOption (which wins). The engine calls it
// once, at the first failure.
func applyKnobs(ctx context.Context, j *job) {
	k := ctxforms.Of(ctx)
	if k == (ctxforms.Forms{}) {
		return
	}
	if k.Flags&ctxforms.Disable != 0 {
		j.disabled = true
	}
	if k.Flags&ctxforms.NotFound != 0 {
		j.retryNotFound = true
	}
	if k.HasDeadline && !j.pinDeadline {
		j.deadline = k.Deadline
	}
	if k.HasMaxAttempts && !j.pinMaxAttempts {
		j.maxAttempts = k.MaxAttempts
	}
}
