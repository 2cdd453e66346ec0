package interceptor

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/iamretry/iamretry/interceptor/internal/ctxforms"
	"github.com/iamretry/iamretry/internal/googleerr"
	"github.com/iamretry/iamretry/internal/iammethods"
)

// RoundTripper returns r's engine as an http.RoundTripper around base
// (http.DefaultTransport when nil). A response of 400 or above is classified
// by its JSON status, else its HTTP status; a transport failure of a live
// request (not TLS, context or token errors) is UNAVAILABLE, keeping base's
// error chain. Safety is asked under the gRPC method the request maps to, else
// "VERB /path"; the wait is at least Retry-After or RetryInfo. A retried
// response is drained and closed, the last returned unread (a nil Body reads
// as empty; a failed read gives its bytes, then the error). A per-attempt
// timeout runs until the body is closed; a call it ends wraps
// context.DeadlineExceeded. A success costs nothing beyond base for a request
// without a body or with GetBody.
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
	if rule, ok := iammethods.REST(req.Method, req.URL.Host, req.URL.EscapedPath()); ok {
		name = rule.Method
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
	// once: the request is sent once, its body streamed as it came (it will
	// never be replayed, or it is longer than MaxReplayBody); a failure
	// that could be retried ends with Reason BodyNotReplayable.
	once bool
	// stream is the body of a once request whose head was read to measure
	// it: those bytes, then the rest.
	stream io.ReadCloser
	rule   iammethods.Rule
	mapped bool
	named  bool   // rule, mapped and name are set
	name   string // Attempt.Method: the gRPC method, or "VERB /path"

	last    *http.Response // the last attempt's response, its body restored
	lastErr error          // the last attempt's error: a *googleapi.Error for a response
	cut     bool           // the last attempt ran out of its per-attempt timeout
}

// maxErrorBody bounds how much of an error response is read to classify it;
// the rest stays readable in the returned response.
const maxErrorBody = 1 << 20

// MaxReplayBody is the longest body without GetBody the RoundTripper buffers
// to replay; a longer one, or one of a request that may not be replayed, is
// streamed and sent once (Reason BodyNotReplayable).
const MaxReplayBody = 4 << 20

// first runs the first attempt of a request that needs a per-attempt
// timeout or has a body without GetBody: such a body is buffered (up to
// MaxReplayBody) when the request may be replayed, else streamed.
func (c *restCall) first() (*http.Response, error) {
	if hasBody(c.req) && c.req.GetBody == nil {
		if !c.mayReplay() {
			c.once = true // sent as it is: nothing is read ahead
		} else if err := c.buffer(); err != nil {
			return nil, err
		}
	}
	if err := c.attempt(c.req.Context(), 1, c.t.perAttempt); err == nil {
		c.t.succeeded(c.req)
		return c.last, nil
	}
	return c.retry()
}

// mayReplay reports whether the request could ever be sent again: not
// when retries are disabled for it (DisableContext, WithMaxAttempts(1),
// MaxAttemptsContext(ctx, 1)),
// when an owner above retries it (it then makes a new request), or when it
// is unsafe to send again (the safe-to-retry function, asked before the
// first attempt: under the gRPC method it maps to, or its "VERB /path"). A
// request whose safety depends on its body (a setIamPolicy) is read to
// decide. An unsafe request is not buffered for the rare failures that are
// retried whatever the method (a dial failure, a 429, an opted-in
// 404): those end with Reason BodyNotReplayable.
func (c *restCall) mayReplay() bool {
	ctx := c.req.Context()
	if owned(ctx) {
		return false
	}
	k := ctxforms.Of(ctx)
	maxAttempts := c.t.r.cfg.maxAttempts
	if k.HasMaxAttempts {
		maxAttempts = k.MaxAttempts
	}
	if k.Flags&ctxforms.Disable != 0 || maxAttempts == 1 {
		return false
	}
	c.mapName()
	if c.mapped && c.rule.Body != nil {
		return true
	}
	if c.mapped {
		return c.t.r.cfg.safe(c.rule.Method, nil)
	}
	return c.t.r.cfg.safe(c.name, c.req)
}

// buffer reads the body, up to MaxReplayBody, so that it can be replayed;
// a longer one is streamed (its head, then the rest) and sent once.
func (c *restCall) buffer() error {
	b, err := io.ReadAll(io.LimitReader(c.req.Body, MaxReplayBody+1))
	if err != nil {
		_ = c.req.Body.Close()
		return err
	}
	if len(b) > MaxReplayBody {
		c.once = true
		c.stream = &restoredBody{Reader: io.MultiReader(bytes.NewReader(b), c.req.Body), orig: c.req.Body}
		return nil
	}
	_ = c.req.Body.Close()
	c.body, c.buffered = b, true
	return nil
}

// mapName sets the gRPC method the request maps to and Attempt.Method.
func (c *restCall) mapName() {
	if c.named {
		return
	}
	c.named = true
	c.rule, c.mapped = iammethods.REST(c.req.Method, c.req.URL.Host, c.req.URL.EscapedPath())
	c.name = c.rule.Method
	if !c.mapped {
		c.name = c.req.Method + " " + c.req.URL.Path
	}
}

// failed takes the failed first attempt of the fast path.
func (c *restCall) failed(resp *http.Response, err error) (*http.Response, error) {
	if owned(c.req.Context()) {
		if err != nil {
			// The owner above classifies it: as the same failure over gRPC.
			return resp, wrapTransport(c.req, err)
		}
		return resp, nil
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
	c.mapName()
	name := c.name
	j := &job{
		method:      name,
		deadline:    cfg.deadline,
		maxAttempts: cfg.maxAttempts,
		perAttempt:  c.t.perAttempt,
		face:        c,
		again:       c.again,
		once:        c.once,
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
	if te, ok := err.(*attemptTimeoutError); ok {
		// No owner above retries it: the caller gets what net/http's own
		// timeouts give, an error that is context.DeadlineExceeded.
		err = &attemptTimeoutError{d: te.d, err: te.err, final: true}
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

// again runs attempt n (n >= 2) under the timeout d the engine gives it,
// releasing the last attempt's response.
func (c *restCall) again(ctx context.Context, n int, d time.Duration) error {
	if c.last != nil {
		discard(c.last)
		c.last = nil
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
	actx, cancel, own := attemptDeadline(ctx, d)
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
		c.cut = own.ranOut(ctx, err)
		if c.cut {
			// The Retrier's own timeout, not the caller's: DEADLINE_EXCEEDED,
			// as gRPC reports it, transient to an owner above too.
			err = &attemptTimeoutError{d: d, err: err}
		}
		return c.absorb(nil, err)
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	handed = true
	err = c.absorb(resp, nil)
	if resp.StatusCode == http.StatusGatewayTimeout {
		c.cut = own.ranOut(ctx, context.DeadlineExceeded) // a 504 is REST's DEADLINE_EXCEEDED
	}
	return err
}

// request returns the request of attempt n: the caller's for a first
// attempt that needs nothing else, else a clone with the body replayed.
func (c *restCall) request(ctx context.Context, n int) (*http.Request, error) {
	if n == 1 && !c.buffered && c.stream == nil && ctx == c.req.Context() {
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
	case c.stream != nil:
		req.Body = c.stream
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
//
// An error from base that is a failure of the connection becomes a
// *transportError (UNAVAILABLE). A nil Body (net/http allows it from a
// custom transport) is an empty one. A body whose read fails gives the
// caller that error once the bytes read before it are consumed. (The
// *googleapi.Error keeps the response's headers: the engine reads a
// 429's Retry-After as its delay.)
func (c *restCall) absorb(resp *http.Response, err error) error {
	if err != nil {
		err = wrapTransport(c.req, err)
		c.last, c.lastErr = nil, err
		return err
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	c.last, c.lastErr = resp, nil
	if resp.StatusCode < 400 {
		return nil
	}
	orig := resp.Body
	b, rerr := io.ReadAll(io.LimitReader(orig, maxErrorBody))
	if rerr != nil {
		_ = orig.Close()
		resp.Body = &failedBody{r: bytes.NewReader(b), err: rerr}
	} else {
		resp.Body = &restoredBody{Reader: io.MultiReader(bytes.NewReader(b), orig), orig: orig}
	}
	c.lastErr = googleapi.CheckResponseWithBody(resp, b)
	return c.lastErr
}

// safe says whether the request may be sent again after an ambiguous
// failure (the engine asks only then).
//
// A request that never left the client (its dial failed) is safe whatever
// its method. One that maps to no gRPC method is asked of the safe-to-retry
// function under its "VERB /path" with the *http.Request as req (the
// default, SafeToRetry, says GET and HEAD).
func (c *restCall) safe() bool {
	if isNotSent(c.lastErr) || c.stream != nil {
		// Never sent; or a body too long to buffer: it cannot be sent
		// again whatever its safety (the engine ends with
		// BodyNotReplayable).
		return true
	}
	if !c.mapped {
		return c.t.r.cfg.safe(c.name, c.req)
	}
	var req any
	if c.rule.Body != nil {
		b, ok := c.bodyBytes()
		if !ok {
			return false
		}
		if req = c.rule.Body(b, c.req.URL); req == nil {
			return false // a body we cannot read: not known to be safe
		}
	}
	return c.t.r.cfg.safe(c.rule.Method, req)
}

// bodyBytes returns the request's body, from the buffer or GetBody.
func (c *restCall) bodyBytes() ([]byte, bool) {
	switch {
	case c.buffered:
		return c.body, true
	case !hasBody(c.req):
		return nil, true
	case c.req.GetBody == nil:
		return nil, false // streamed: not known
	}
	rc, err := c.req.GetBody()
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return b, err == nil
}

// message is the request, for the stacked-layers detector (GAPIC builds a
// new request per attempt, so over REST the context is what matches).
func (c *restCall) message() any { return c.req }

// contentSum is the fingerprint of the request's content for the
// stacked-layers detector: its method, URL and body (some methods, such as
// QueryGrantableRoles, name their resource in the body); 0 when the body
// cannot be read again (streamed once).
func (c *restCall) contentSum() uint64 {
	b, ok := c.bodyBytes()
	if !ok {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(c.req.Method + " " + c.req.URL.String() + "\n"))
	_, _ = h.Write(b)
	return h.Sum64() | 1 // never 0
}

// serverWait is the server's word on the wait that only the response
// carries: Retry-After, a floor under the wait (a RetryInfo in the JSON
// error's details is read by the engine from the error itself, as for
// every face).
func (c *restCall) serverWait() (time.Duration, pushbackState) {
	if c.last == nil {
		return 0, pushbackNone
	}
	if d, ok := googleerr.RetryAfter(c.last.Header.Get("Retry-After"), c.t.r.cfg.clock.Now()); ok {
		return d, pushbackFloor
	}
	return 0, pushbackNone
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

// failedBody is an error response's body whose read failed: the bytes read
// before the failure, then the read's error.
type failedBody struct {
	r   *bytes.Reader
	err error
}

func (b *failedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		err = b.err
	}
	return n, err
}

func (b *failedBody) Close() error { return nil }

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
