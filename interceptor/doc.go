// Package interceptor retries Google Cloud IAM calls the way Google's IAM
// guidance ("Retry failed requests") says: requests that are safe to retry
// are retried on HTTP 500, 502, 503 and 504 (gRPC INTERNAL, UNAVAILABLE,
// DEADLINE_EXCEEDED) with truncated exponential backoff with jitter,
//
//	wait(n) = min(2^n + random_fraction, maximum_backoff) seconds
//
// for retry n = 0, 1, 2, ..., until a deadline; NOT_FOUND (404) is retried
// only on request, because IAM reads are eventually consistent; and ABORTED
// (409, a concurrent policy change) is never retried as a lone write: the
// policy package reruns the whole read-modify-write.
//
// # Use
//
// Build a Retrier once and wire each client to it with one call:
//
//	r, err := interceptor.New(interceptor.WithDeadline(2 * time.Minute))
//	if err != nil { ... }
//	c, err := interceptor.NewClient(ctx, r, admin.NewIamClient, opts...)
//
// NewClient adds the interceptor as a dial option, turns the client's own
// gax retries off (one layer retries) and turns each method's gax timeout
// into a per-attempt timeout, so that r's deadline governs the call.
// NewRESTClient does the same for REST clients (GAPIC NewXxxRESTClient, the
// google.golang.org/api discovery clients' NewService): the same engine as
// an http.RoundTripper around the client's transport (Retrier.RoundTripper,
// for a client built by hand). A client built by hand needs the dial option
// and DisableGAXRetries. Retrier.Do retries a step of your own that is safe
// to repeat; policy changes go through the policy package's Updater,
// built on Transact, the retried read-modify-write of any object guarded by
// an etag (custom roles, deny policies, objects of your own).
//
// Per call, on every face and transport, the context forms DisableContext
// (no retries), RetryNotFoundContext (404 retries), DeadlineContext and
// MaxAttemptsContext (the retry deadline and attempt cap) apply; they are
// read only after a failure. On gRPC calls, Disable(), RetryNotFound(),
// CallDeadline, CallMaxAttempts and CallPerAttemptTimeout say the same
// through gax.WithGRPCOptions, and win over a context form; the per-call
// per-attempt timeout is gRPC-only.
//
// After creating something, WaitVisible reads it until several reads in a
// row succeed (default 3), retrying NOT_FOUND and, only there and only
// before its first good read, a PERMISSION_DENIED that may mean "not
// visible to you yet".
//
// # See it
//
// WithObserver hears every failed attempt with the call's context, and the
// end of every call that was retried (Reason Succeeded, or its give-up).
// WithMeterProvider records OpenTelemetry instruments (calls, retries per
// call, time waited, give-ups by reason, policy writes and conflicts), and a
// recording span in the call's context gets iamretry.retry and
// iamretry.gave_up events.
//
// # Promises
//
//   - A call that succeeds at once costs no allocation and reads no clock.
//   - Only safe requests are retried (SafeToRetry, or WithSafeToRetry).
//   - The error returned is the server's last one, unchanged; a context that
//     ends during a wait yields an error with the context's code that wraps
//     the server's last error.
//   - No wait is started that would end after the retry deadline (default
//     60 s from the first failure) or the context's deadline.
//   - The invoker is called at most once per attempt.
//
// # Retry at one layer
//
// cloud.google.com/go clients retry some methods themselves through gax; an
// interceptor under them multiplies attempts. NewClient and NewRESTClient
// turn gax's retries off; for a client built by hand, DisableGAXRetries.
// When a layer above still retries a call the Retrier retried and gave up
// on, the Retrier notices on the failure path (the same context, or the
// same request value within seconds) and reports it: the span event
// iamretry.stacked, the counter iamretry.client.call.stacked{grpc.method},
// and once per method a Warn through WithLogger naming the fix. It cannot
// see a layer that retries only after a success, or with a fresh context
// and a fresh request value; over REST (a new request per attempt) only the
// context is matched, so a call under context.Background is not seen.
//
// One owner per call: Retrier.Do, WaitVisible, Transact and the policy Updater own the retries of
// what they run. They mark the context they run it with, and the
// interceptor passes the failures of marked calls straight through (it
// looks at the mark only after an attempt failed). So an Updater over a
// client that carries the interceptor makes exactly the attempts of the
// Updater alone.
//
// # Layout
//
// retrier.go holds the one retry loop (decide, schedule, budget, observe,
// end); observe.go, events.go and metrics.go are what it reports to;
// its faces fill one small job value each: interceptor.go (gRPC calls),
// rest.go (the RoundTripper; resttransport.go sorts its connection
// failures), do.go (Retrier.Do), visible.go (WaitVisible)
// and transact.go (Transact, the read-modify-write of any object guarded by
// an etag, on which the policy Updater is built).
package interceptor
