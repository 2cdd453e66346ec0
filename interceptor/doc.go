// Package interceptor retries Google Cloud IAM calls the way Google's IAM
// guidance ("Retry failed requests") says: requests that are safe to retry
// are retried on HTTP 500, 502, 503 and 504 (gRPC INTERNAL, UNAVAILABLE,
// DEADLINE_EXCEEDED) and on quota rejections (429), waiting
//
//	wait(n) = min(2^n + random_fraction, maximum_backoff) seconds
//
// before retry n = 0, 1, 2, ..., within a deadline; NOT_FOUND (404) only on
// request (IAM reads are eventually consistent); ABORTED (409) never as a
// lone write: Transact and the policy Updater rerun the read-modify-write.
//
// Build a Retrier once with New and run every call on it: NewClient and
// NewRESTClient wire a GAPIC or discovery client to it (turning gax's own
// retries off); Retrier.Do retries a step of your own, WaitVisible reads a
// new resource until it is really there, and Transact retries an etag'd
// read-modify-write. Context forms (DisableContext, RetryNotFoundContext,
// DeadlineContext, MaxAttemptsContext) adjust one call on every face; gRPC
// call options (Disable, RetryNotFound, CallDeadline, CallMaxAttempts,
// CallPerAttemptTimeout) do the same through gax.WithGRPCOptions and win.
// WithObserver, WithLogger and WithMeterProvider report retries and
// give-ups, and a recording span in the call's context gets events.
//
// Promises:
//
//   - A call that succeeds at once costs no allocation and reads no clock.
//   - Only safe requests are retried (SafeToRetry, or WithSafeToRetry).
//   - The error returned is the server's last one, unchanged; a context that
//     ends during a wait yields an error with the context's code that wraps
//     it.
//   - No wait is started that would end after the retry deadline or the
//     context's deadline.
//   - One layer retries: the calls made under Do, WaitVisible and Transact
//     pass through the interceptor beneath unretried. Do not nest them.
//
// The README has the rules in full: what is retried, REST, quotas,
// eventual consistency, metrics and the choice of a deadline.
package interceptor
