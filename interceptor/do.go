package interceptor

import (
	"context"

	"github.com/iamretry/iamretry/codes"
)

// Task tells Retrier.Do how to retry an operation that is not a single gRPC
// call, such as the policy updater's read-modify-write.
type Task struct {
	// Name names the operation in Attempts and logs; it is also the method
	// given to the Retrier's classifier when Classify is nil.
	Name string
	// Classify sorts the operation's errors into retry classes; nil means
	// the Retrier's classifier (WithClassifier, default codes.OfError).
	Classify func(err error) codes.Class
	// RetryConflict reruns the operation after a Conflict (409 ABORTED).
	// Only an operation that starts again from a fresh read may set it: the
	// read-modify-write of the IAM guidance.
	RetryConflict bool
	// RetryNotFound reruns it after a Propagation failure (404), as
	// WithRetryNotFound does for every call.
	RetryNotFound bool
}

// Do runs op, and runs it again after each failure the way the Retrier
// retries a gRPC call: Transient failures (and Conflict or Propagation ones
// when t says so) wait the same backoff, within the same deadline, attempt
// cap and context, and observers see each failed attempt. The operation
// vouches for itself being safe to rerun: Do does not ask the safe-to-retry
// function. Do returns nil once op succeeds, or the last error op returned,
// unchanged; when the context ends during a wait, an error whose gRPC code
// is the context's and that wraps op's last error.
func (r *Retrier) Do(ctx context.Context, t Task, op func(ctx context.Context) error) error {
	if r.budget != nil {
		r.budget.deposit()
	}
	err := op(ctx)
	if err == nil {
		return nil
	}
	return r.run(ctx, &task{
		method:        t.Name,
		classify:      t.Classify,
		retryNotFound: t.RetryNotFound,
		retryConflict: t.RetryConflict,
		again:         func(ctx context.Context, _ int) error { return op(ctx) },
	}, err)
}
