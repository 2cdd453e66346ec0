package interceptor

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/api/googleapi"
)

// RoundTripper returns the Retrier as an http.RoundTripper around base
// (http.DefaultTransport when nil), for REST clients: the discovery clients
// (google.golang.org/api/iam/v1, cloudresourcemanager/v3) and GAPIC clients
// built with NewRESTClient. It is the same engine as the interceptor: the
// same schedule, deadlines, attempt cap, budget, observers and logger.
//
// A response with a status below 400 is returned as base gave it: on that
// path the RoundTripper reads no clock, walks no context and allocates
// nothing beyond base, when the request has no body or has GetBody (every
// request http.NewRequest builds from a bytes or strings reader has it, and
// the discovery and GAPIC clients build theirs that way). A request with a
// body and no GetBody is buffered once, before its first attempt, so that
// it can be sent again.
//
// Any other response, or an error from base, is decided as the interceptor
// decides a failed gRPC call:
//
//   - The class comes from the Retrier's classifier (codes.OfError by
//     default), given the *googleapi.Error that googleapi.CheckResponse
//     builds from the response (the JSON error body's status first, else the
//     HTTP status).
//   - Whether a request may be sent again after an ambiguous failure (500,
//     502, 503, 504) is asked of the safe-to-retry function (SafeToRetry by
//     default) under the gRPC method the request transcodes to (the IAM
//     services' google.api.http rules, matched by host and path; the IAM
//     mixin's :getIamPolicy, :setIamPolicy and :testIamPermissions on any
//     host), with the request message read from the JSON body where the
//     answer depends on it (a setIamPolicy is safe only with an etag and a
//     mask that is empty or names etag). A request that maps to no method
//     goes by HTTP semantics: GET and HEAD are safe, nothing else is.
//     Attempt.Method is that gRPC method, or "VERB /path" when there is
//     none.
//   - The wait is at least what the server asks for: a Retry-After header
//     (seconds or an HTTP date) and a google.rpc.RetryInfo in the error's
//     details. WithPushback (a gRPC trailer) does not apply to HTTP.
//   - 404 is retried only when the Retrier has WithRetryNotFound or the
//     request's context was made with RetryNotFoundContext; no failure of a
//     request whose context was made with DisableContext is retried.
//   - A request whose context is owned by Retrier.Do or a policy Updater
//     (they mark it) passes straight through: its owner retries it.
//
// Each retry is a clone of the request with its body replayed (GetBody, or
// the buffer) and the AttemptMetadataKey header carrying the retry's number;
// the response of an attempt that is retried is drained and closed. The
// response of the last attempt is returned as it came, its body readable
// from the start. When the request's context ends during a wait, the wait
// ends at once and RoundTrip returns an error that wraps the context's error
// and the last attempt's *googleapi.Error. With WithPerAttemptTimeout each
// attempt runs under that timeout until its response body is closed.
func (r *Retrier) RoundTripper(base http.RoundTripper) http.RoundTripper {
	r.mustBeBuilt("Retrier.RoundTripper")
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{r: r, base: base, perAttempt: r.cfg.perAttempt}
}

type transport struct {
	r    *Retrier
	base http.RoundTripper
	// perAttempt is each attempt's timeout: the Retrier's, or, for a
	// client built by NewRESTClient on a Retrier without one, its gax
	// timeout (client.go); 0: none.
	perAttempt time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		// Malformed: nothing to map or retry; base says what is wrong
		// (http.Transport: "http: nil Request.URL").
		return t.base.RoundTrip(req)
	}
	if t.r.budget != nil {
		t.r.budget.deposit()
	}
	if t.perAttempt > 0 || (hasBody(req) && req.GetBody == nil) {
		c := &restCall{t: t, req: req}
		return c.first()
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode < 400 {
		t.succeeded(req)
		return resp, nil
	}
	c := &restCall{t: t, req: req}
	return c.failed(resp, err)
}

// restOther is the name a request that maps to no gRPC method is counted
// under (grpc.method "other").
const restOther = "other"

// succeeded counts a request that succeeded without a retry of its own, under
// the gRPC method it maps to (metrics only: mapping costs no allocation).
func (t *transport) succeeded(req *http.Request) {
	if t.r.m == nil {
		return
	}
	name := restOther
	if rule, ok := restMethod(req.Method, req.URL.Host, req.URL.Path); ok {
		name = rule.method
	}
	t.r.m.succeeded(name)
}

func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

// restCall is one HTTP request on the failure path (or one that needs a
// buffered body or per-attempt timeouts): the REST face of the engine.
type restCall struct {
	t        *transport
	req      *http.Request // the caller's, never changed
	body     []byte        // the buffered body, when buffered
	buffered bool
	rule     restRule
	mapped   bool

	last    *http.Response // the last attempt's response, its body restored
	lastErr error          // the last attempt's error: a *googleapi.Error for a response
	cut     bool           // the last attempt ran out of its per-attempt timeout
	// retryEnd is when the retry deadline ends, for per-attempt timeouts.
	retryEnd time.Time
}

// maxErrorBody bounds how much of an error response is read to classify it;
// the rest stays readable in the returned response.
const maxErrorBody = 1 << 20

// first buffers a body without GetBody and runs the first attempt.
func (c *restCall) first() (*http.Response, error) {
	if hasBody(c.req) && c.req.GetBody == nil {
		b, err := io.ReadAll(c.req.Body)
		_ = c.req.Body.Close()
		if err != nil {
			return nil, err
		}
		c.body, c.buffered = b, true
	}
	if err := c.attempt(c.req.Context(), 1, c.t.perAttempt); err == nil {
		c.t.succeeded(c.req)
		return c.last, nil
	}
	return c.retry()
}

// failed takes the failed first attempt of the fast path.
func (c *restCall) failed(resp *http.Response, err error) (*http.Response, error) {
	if owned(c.req.Context()) {
		return resp, err
	}
	if c.absorb(resp, err) == nil {
		c.t.succeeded(c.req)
		return c.last, nil
	}
	return c.retry()
}

// retry hands the failed call to the engine and turns its answer into
// RoundTrip's.
func (c *restCall) retry() (*http.Response, error) {
	ctx := c.req.Context()
	if owned(ctx) {
		return c.last, c.transportErr()
	}
	cfg := &c.t.r.cfg
	c.rule, c.mapped = restMethod(c.req.Method, c.req.URL.Host, c.req.URL.Path)
	name := c.rule.method
	if !c.mapped {
		name = c.req.Method + " " + c.req.URL.Path
	}
	j := &job{
		method:      name,
		deadline:    cfg.deadline,
		maxAttempts: cfg.maxAttempts,
		checkSafe:   true,
		safe:        c.safe,
		floor:       c.floor,
		again:       c.again,
	}
	applyKnobs(ctx, j) // DisableContext, RetryNotFoundContext, DeadlineContext, MaxAttemptsContext
	if j.deadline > 0 && c.t.perAttempt > 0 {
		j.start = cfg.clock.Now()
		c.retryEnd = j.start.Add(j.deadline)
	}
	if c.t.perAttempt > 0 {
		j.cut = func() bool { return c.cut }
	}
	// A panic or runtime.Goexit in user code the engine calls (an
	// observer, a logger, a classifier, the clock, base) unwinds through
	// here: the last response is released on the way (closed, not drained:
	// nothing more is read while unwinding). No recover: the panic goes on
	// as it was, with its stack.
	ended := false
	defer func() {
		if !ended && c.last != nil {
			_ = c.last.Body.Close()
			c.last = nil
		}
	}()
	err := c.t.r.run(ctx, j, c.lastErr)
	ended = true
	switch {
	case err == nil || (err == c.lastErr && c.last != nil):
		return c.last, nil // the last response, as it came
	case c.last != nil:
		// The context ended during a wait: the error wraps the last
		// response's error, and that response is released.
		discard(c.last)
		c.last = nil
	}
	return nil, err
}

// transportErr is lastErr when the last attempt got no response.
func (c *restCall) transportErr() error {
	if c.last != nil {
		return nil
	}
	return c.lastErr
}

// again runs attempt n (n >= 2), releasing the last attempt's response.
func (c *restCall) again(ctx context.Context, n int) error {
	if c.last != nil {
		discard(c.last)
		c.last = nil
	}
	d := c.t.perAttempt
	if d > 0 && !c.retryEnd.IsZero() {
		d = max(min(d, c.retryEnd.Sub(c.t.r.cfg.clock.Now())), time.Nanosecond)
	}
	return c.attempt(ctx, n, d)
}

// attempt sends attempt n under a timeout of d when d > 0 and takes in its
// outcome.
func (c *restCall) attempt(ctx context.Context, n int, d time.Duration) error {
	c.cut = false
	if d <= 0 {
		req, err := c.request(ctx, n)
		if err != nil {
			return c.absorb(nil, err)
		}
		return c.absorb(c.t.base.RoundTrip(req))
	}
	actx, cancel := context.WithTimeout(ctx, d)
	// The attempt's context is cancelled here unless its response body
	// takes it over, also when base panics or calls runtime.Goexit (no
	// recover: the panic goes on as it was).
	handed := false
	defer func() {
		if !handed {
			cancel()
		}
	}()
	req, err := c.request(actx, n)
	if err != nil {
		return c.absorb(nil, err)
	}
	resp, err := c.t.base.RoundTrip(req)
	if err != nil {
		c.cut = actx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		return c.absorb(nil, err)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	handed = true
	return c.absorb(resp, nil)
}

// request returns the request of attempt n: the caller's for a first
// attempt that needs nothing else, else a clone with the body replayed.
func (c *restCall) request(ctx context.Context, n int) (*http.Request, error) {
	if n == 1 && !c.buffered && ctx == c.req.Context() {
		return c.req, nil
	}
	req := c.req.Clone(ctx)
	if req.Header == nil {
		req.Header = http.Header{} // a request built by hand; the caller's stays as it was
	}
	if n > 1 {
		req.Header.Set(AttemptMetadataKey, strconv.Itoa(n-1))
	}
	switch {
	case c.buffered:
		req.Body = io.NopCloser(bytes.NewReader(c.body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(c.body)), nil }
		req.ContentLength = int64(len(c.body))
	case n > 1 && hasBody(c.req):
		b, err := c.req.GetBody()
		if err != nil {
			return nil, err
		}
		req.Body = b
	}
	return req, nil
}

// absorb takes in an attempt's outcome: a response below 400 is a success;
// any other response is read (up to maxErrorBody), its body restored for
// the caller, and turned into the *googleapi.Error the engine classifies.
func (c *restCall) absorb(resp *http.Response, err error) error {
	if err != nil {
		c.last, c.lastErr = nil, err
		return err
	}
	c.last, c.lastErr = resp, nil
	if resp.StatusCode < 400 {
		return nil
	}
	orig := resp.Body
	b, rerr := io.ReadAll(io.LimitReader(orig, maxErrorBody))
	if rerr != nil {
		_ = orig.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
	} else {
		resp.Body = &restoredBody{Reader: io.MultiReader(bytes.NewReader(b), orig), orig: orig}
	}
	c.lastErr = googleapi.CheckResponseWithBody(resp, b)
	return c.lastErr
}

// safe says whether the request may be sent again after an ambiguous
// failure (the engine asks only then).
func (c *restCall) safe() bool {
	if !c.mapped {
		return c.req.Method == http.MethodGet || c.req.Method == http.MethodHead
	}
	var req any
	if c.rule.body != nil {
		b, ok := c.bodyBytes()
		if !ok {
			return false
		}
		if req = c.rule.body(b, c.req.URL); req == nil {
			return false // a body we cannot read: not known to be safe
		}
	}
	return c.t.r.cfg.safe(c.rule.method, req)
}

// bodyBytes returns the request's body, from the buffer or GetBody.
func (c *restCall) bodyBytes() ([]byte, bool) {
	switch {
	case c.buffered:
		return c.body, true
	case !hasBody(c.req):
		return nil, true
	}
	rc, err := c.req.GetBody()
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, err == nil
}

// floor is the server's word on the wait that only the response carries:
// Retry-After (a RetryInfo in the JSON error's details is read by the
// engine from the error itself, as for every face).
func (c *restCall) floor() (time.Duration, bool) {
	if c.last == nil {
		return 0, false
	}
	return retryAfter(c.last.Header.Get("Retry-After"), c.t.r.cfg.clock.Now())
}

// retryAfter reads a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	s, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) && s > 0 {
		return maxDuration, true // delay-seconds is 1*DIGIT: too many to count is longer than any deadline
	}
	if err == nil {
		if s < 0 {
			return 0, false
		}
		if s > int64(maxDuration/time.Second) {
			return maxDuration, true
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// jsonRetryInfo finds a google.rpc.RetryInfo in the details of a JSON error
// body, as Google's REST APIs write it:
// {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}.
func jsonRetryInfo(details []any) (time.Duration, bool) {
	for _, d := range details {
		m, ok := d.(map[string]any)
		if !ok || m["@type"] != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		s, _ := m["retryDelay"].(string)
		if dd, err := time.ParseDuration(s); err == nil && dd > 0 {
			return dd, true
		}
	}
	return 0, false
}

// discard drains (up to maxErrorBody) and closes a response's body, so that
// its connection can be reused.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
}

// restoredBody is an error response's body after it was read to classify
// it: the bytes read, then the rest; Close closes the original.
type restoredBody struct {
	io.Reader
	orig io.Closer
}

func (b *restoredBody) Close() error { return b.orig.Close() }

// cancelBody ends an attempt's per-attempt context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
