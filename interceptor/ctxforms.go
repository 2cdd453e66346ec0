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

// DisableContext returns a context under which no face retries: a gRPC call,
// a REST request, Retrier.Do and WaitVisible made with it get their first
// failure as it is. On an Updater's Update it stops the retries of transient
// failures, never the reruns after a conflict (an Updater batches only
// callers whose context forms are the same). It is the context form of Disable(),
// read only after a failure: a call that succeeds at once pays nothing.
func DisableContext(ctx context.Context) context.Context {
	return withFlag(ctx, ctxforms.Disable)
}

// RetryNotFoundContext returns a context under which every face retries 404
// NOT_FOUND as it retries Propagation failures: use it for a read that
// follows the creation of what it reads (on an Update, for a grant to a
// member that is not visible yet). It is the context form of
// RetryNotFound(), with the same caveat: not for a delete.
func RetryNotFoundContext(ctx context.Context) context.Context {
	return withFlag(ctx, ctxforms.NotFound)
}

// DeadlineContext returns a context that sets the retry deadline of the
// calls made with it, on every face, in place of the Retrier's
// (WithDeadline): how long a call keeps retrying from its first failure; 0
// means none of its own. The context's own deadline still wins when sooner;
// on a gRPC call a CallDeadline option wins over it. It is read only after
// a failure. A negative d panics at once, naming the value.
func DeadlineContext(ctx context.Context, d time.Duration) context.Context {
	if d < 0 {
		panic(fmt.Sprintf("iamretry: DeadlineContext(ctx, %v): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)", d))
	}
	k := ctxforms.Of(ctx)
	k.Deadline, k.HasDeadline = d, true
	return ctxforms.With(ctx, k)
}

// MaxAttemptsContext returns a context that caps the attempts of the calls
// made with it, the first included, on every face, in place of the
// Retrier's cap (WithMaxAttempts): 1 never retries, 0 means no cap (the
// deadline rules). On a policy Updater's Update the cap counts transient
// retries only: reruns after a concurrent change never count toward it. On
// a gRPC call a CallMaxAttempts option wins over it. It is read only after
// a failure. A negative n is a programming error: MaxAttemptsContext panics
// at once, naming the value.
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
