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
// # Which requests are safe to retry
//
// A transient error (package codes) says a retry may succeed, not that it is
// harmless: the first attempt may have committed and only its answer been
// lost. SafeToRetry answers the second question, method by method, for every
// method of google.iam.v1.IAMPolicy, google.iam.admin.v1.IAM,
// google.iam.credentials.v1.IAMCredentials, google.iam.v2.Policies and
// google.longrunning.Operations (this table is also the metrics' method
// table). Its rules:
//
//   - Reads are safe, in any service: a method whose first CamelCase word is
//     Get, List, Search, Query, Test, Lint or BatchGet ("Getaway" is not).
//   - An etag write is safe only with an etag the server checks: SetIamPolicy
//     (any service) and the admin API's UpdateRole with a non-empty etag and
//     an update_mask that is empty or names "etag"; v2's UpdatePolicy and
//     DeletePolicy with an etag. A replay of a write that landed then fails
//     ABORTED; without the etag it would be a blind overwrite (or a delete of
//     a policy of the same name created in between).
//   - Writes that put one admin resource into one named state (Delete*,
//     Undelete*, Enable*, Disable*, a service account's display name or
//     description; DeleteRole and UndeleteRole with or without an etag: a
//     role ID is never reused) are safe: a replay re-asserts the caller's own
//     request. A replayed delete may answer NOT_FOUND for its own success.
//   - Creates, UploadServiceAccountKey, CreateRole and v2's CreatePolicy are
//     not safe: a replay that landed answers ALREADY_EXISTS for the caller's
//     own resource. CreateServiceAccountKey never is: a key whose answer was
//     lost is a live credential nobody holds.
//   - IAMCredentials calls (tokens, signatures) and the Operations service
//     (polls, Cancel, Delete) are safe: they keep no state or set one state.
//   - A REST request that maps to no gRPC method is named "VERB /path": GET
//     and HEAD are safe. Any other method, or a malformed name, is not.
//
// Two failures are retried whatever the method, because they prove nothing
// was done: NOT_FOUND with the 404 opt-in, and a RESOURCE_EXHAUSTED (429)
// that carries a delay. Over REST, so is a dial failure.
//
// # REST
//
// Retrier.RoundTripper runs the interceptor's engine for HTTP. A response
// with a status of 400 or above is decided as a failed gRPC call: the
// classifier gets the *googleapi.Error that googleapi.CheckResponse builds
// (the JSON body's status first, else the HTTP status; a 429 with
// Retry-After counts as one with RetryInfo). A connection failure from the
// base transport (refused, reset, EOF, closed, an HTTP/2 stream, GOAWAY or
// connection error, a transport timeout) is UNAVAILABLE: the error returned
// keeps base's text and chain (errors.Is finds syscall.ECONNRESET) and has
// GRPCStatus UNAVAILABLE; TLS failures and context errors stay as they are.
// Safety is asked under the gRPC method the request transcodes to (the IAM
// services' google.api.http rules, matched by host and path, and the
// :getIamPolicy, :setIamPolicy and :testIamPermissions mixins on any host),
// with the request message read from the JSON body where the answer depends
// on it; Attempt.Method is that method, else "VERB /path". A dial failure
// is retried whatever the method (the request never left the client). The
// wait is at least the Retry-After header and any RetryInfo; the gRPC
// pushback trailer does not apply.
//
// Each retry sends a clone of the request with its body replayed (GetBody,
// or a buffer made once, up to MaxReplayBody, only for a request that may be
// replayed) and the AttemptMetadataKey header; the response of an attempt
// that is retried is drained and closed. A request owned by Do, WaitVisible
// or Transact (and so every Updater) passes straight through. With WithPerAttemptTimeout each
// attempt runs under the timeout until its body is closed, and an attempt
// it cuts fails with GRPCStatus DEADLINE_EXCEEDED without wrapping
// context.DeadlineExceeded. An error response with a nil Body is empty; one
// whose body read fails is returned with the bytes read, then the error.
//
// # Wiring a client
//
// Retries stacked on retries multiply: the IAM admin client (v1.15.1)
// retries seven methods itself through gax (List/Get/Update/Delete
// ServiceAccount, List/Get/DeleteServiceAccountKey), and each of its
// attempts would run the interceptor's whole schedule. NewClient and
// NewRESTClient turn gax's retries off for every method (and for the
// client's LROClient), as DisableGAXRetries does by appending
// gax.WithRetry(nil) to a copy of each method's options.
//
// A GAPIC method's gax timeout (60 s on 15 of the admin client's 31
// methods) is a context deadline on the whole call, and a context deadline
// wins over the Retrier's retry deadline. NewClient makes each method's
// timeout that method's per-attempt timeout instead (unless the Retrier or
// the call has one); NewRESTClient bounds each attempt by the longest of
// them (the RoundTripper learns a request's method only when it fails). On
// a client built by hand, lift the cap by giving the call a context with a
// deadline of your own (gax applies its timeout only to a context without
// one) or by passing gax.WithTimeout.
//
// NewRESTClient wraps the transport of a copy of the *http.Client given with
// option.WithHTTPClient (one whose Timeout would cap the retry deadline is
// refused), or else of the authenticated client that
// google.golang.org/api/transport/http.NewClient builds from the options
// (cloud-platform scope when none is named). That client is built outside
// the constructor, so the constructor's private defaults (default scopes
// and audience, self-signed JWTs, automatic mTLS endpoint selection) do not
// reach it: set option.WithEndpoint yourself where you need it. The options
// it applies that a constructor refuses beside WithHTTPClient
// (WithQuotaProject, WithRequestReason, WithClientCertSource) are not passed
// on to the constructor.
//
// # Waiting for a new resource
//
// IAM is eventually consistent: right after a create, reads of the new
// resource answer NOT_FOUND for a while, and may succeed once and then
// answer NOT_FOUND again from another replica. WaitVisible therefore wants
// several good reads in a row (3, as Terraform's Google provider waits for a
// new service account), spaced by the backoff's first step (reads back to
// back may hit the same replica). It also retries PERMISSION_DENIED before
// the first good read, because the admin API answers 403 for an account the
// caller cannot see yet and for a projects/-/serviceAccounts/ name that
// designates no account; only with ErrorInfo reason IAM_PERMISSION_DENIED
// or none (SERVICE_DISABLED and the like are real refusals). Everywhere
// else a 403 is a real refusal, returned at once.
//
// # Conflicts
//
// A read-modify-write (Transact, the policy Updater) reruns after a
// concurrent change on a schedule of its own, SpreadConflicts by default.
// With N writers on one policy a write that lands makes every read before
// it stale, so the reads must be spread thin for writes to land; with 2 or 5
// writers the losers should rerun soon. A caller cannot tell the two apart
// at its first conflict (etags are opaque), so the first wait is
// heavy-tailed (log-uniform in [80 ms, 18 s)) and later waits aim at the end
// of the contention. The schedule was chosen by simulation (`iamretry
// simulate --contention`) and checked with separate Updaters over the fake;
// BENCHMARKS.md's contention table gives the figures and the schedules tried.
//
// # Metrics
//
// WithMeterProvider's attribute grpc.method is the method without its
// leading slash when it is an IAM method of SafeToRetry's table or an IAM
// mixin method another API generates (".../Projects/GetIamPolicy", the
// first MaxMixinMethods of them); for a REST request, the gRPC method it
// maps to; policy.UpdateMethod, role.UpdateMethod and deny.UpdateMethod for
// the library's own read-modify-writes; "other" for anything else (names
// given to Do or Transact among them), so that cardinality stays bounded
// (gRFC A66). grpc.status is the code's name on calls that ended in error;
// iamretry.reason on gave_up is deadline, context_deadline, max_attempts,
// budget, pushback, unsafe, body_not_replayable or context_done. Every
// Retrier given the same provider records into the same instruments, kept
// for the process's lifetime. A call is one call of a face; the policy,
// role and deny Updaters count one per Update, however many they write at
// once.
//
// # Layout
//
// One retry engine decides each failure (class, safety, the opt-ins),
// schedules the next attempt (backoff, conflict schedule, the server's
// delay, deadlines, attempt cap, budget) and reports it (observers, logger,
// span events, metrics). Its faces fill one small job each and run on it:
// the gRPC interceptor, the REST RoundTripper, Retrier.Do, WaitVisible and
// Transact, the read-modify-write on which the policy Updater is built. The
// safe-to-retry table and the REST-path-to-method table are shared by the
// faces; per-call options and context forms adjust one call's job.
package interceptor
