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
// Build a Retrier once and add its interceptor to any cloud.google.com/go
// client as a dial option, then turn the client's own gax retries off so
// that one layer retries:
//
//	r, err := interceptor.New(interceptor.WithDeadline(2 * time.Minute))
//	if err != nil { ... }
//	c, err := admin.NewIamClient(ctx,
//		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
//	if err != nil { ... }
//	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil { ... }
//
// REST clients (the google.golang.org/api discovery clients, GAPIC
// NewRESTClients) get the same engine as an http.RoundTripper, put around
// the authenticated transport: option.WithHTTPClient(&http.Client{Transport:
// r.RoundTripper(auth)}). DisableContext and RetryNotFoundContext are its
// per-request options. Retrier.Do retries a step of your own that is safe
// to repeat; policy changes go through the policy package's Updater, built
// on Transact, the retried read-modify-write of any object guarded by an
// etag (custom roles, deny policies, objects of your own).
//
// Per call, Disable() turns retries off, RetryNotFound() opts into 404
// retries, and CallDeadline, CallMaxAttempts and CallPerAttemptTimeout
// replace the Retrier's limits for that call; pass them through
// gax.WithGRPCOptions.
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
// interceptor under them multiplies attempts. Turn gax's retries off for the
// methods this package retries (DisableGAXRetries).
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
