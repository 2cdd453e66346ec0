// Package interceptor retries Google Cloud IAM calls the way Google's IAM
// guidance ("Retry failed requests") says: a request safe to retry is
// retried on HTTP 500, 502, 503, 504 (gRPC INTERNAL, UNAVAILABLE,
// DEADLINE_EXCEEDED) and quota rejections (429), waiting min(2^n +
// random_fraction, maximum_backoff) seconds before retry n, within a
// deadline; NOT_FOUND (404) only on request (IAM is eventually consistent);
// ABORTED (409) never as a lone write: Transact reruns the read-modify-write.
//
// Build a Retrier once with New and run every call on it: NewClient and
// NewRESTClient wire a GAPIC or discovery client to it; Retrier.Do retries a
// step of your own, WaitVisible reads a new resource until it is really
// there, Transact retries an etag'd read-modify-write. Context forms
// (DisableContext, ...) adjust one call on every face, gRPC call options
// (Disable, ...) through gax.WithGRPCOptions. WithObserver, WithLogger,
// WithMeterProvider and the call's span report retries and give-ups.
//
// Promises: a call that succeeds at once allocates nothing and reads no
// clock; only safe requests are retried (SafeToRetry); the error returned is
// the server's last one, unchanged (when the context ends during a wait,
// wrapped in an error with the context's code); no wait is started that
// would end after the retry deadline or the context's; one layer retries
// (calls under Do, WaitVisible and Transact pass the interceptor beneath
// unretried: do not nest them). The README has the rules in full.
package interceptor
