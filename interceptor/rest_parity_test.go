package interceptor_test

// Issue 19: the same failure gets the same answer on the REST face as on
// the gRPC face. Cases marked "ported" come from the peer suites the issue
// measured the RoundTripper with: google-api-go-client's gensupport
// (TestShouldRetry), go-retryablehttp (baseRetryPolicy, Retry-After) and the
// AWS SDK for Go v2's retryable connection errors.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// faultBase fails the first len(errs) attempts with errs in turn (a nil
// entry answers resp), then answers 200.
type faultBase struct {
	mu    sync.Mutex
	errs  []error
	resps []*http.Response // answered where errs has nil
	calls int
	reqs  []*http.Request
}

func (b *faultBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.mu.Lock()
	i := b.calls
	b.calls++
	b.reqs = append(b.reqs, req)
	b.mu.Unlock()
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	if i < len(b.errs) && b.errs[i] != nil {
		return nil, b.errs[i]
	}
	if i < len(b.resps) && b.resps[i] != nil {
		r := b.resps[i]
		r.Request = req
		return r, nil
	}
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
}

// observed is a Retrier on a virtual clock whose observer records attempts.
type observed struct {
	mu       sync.Mutex
	attempts []interceptor.Attempt
	clock    *vclock.Clock
	r        *interceptor.Retrier
}

func newObserved(t testing.TB, opts ...interceptor.Option) *observed {
	o := &observed{clock: vclock.New()}
	o.r = restRetrier(t, o.clock, append([]interceptor.Option{interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
		o.mu.Lock()
		o.attempts = append(o.attempts, a)
		o.mu.Unlock()
	})}, opts...)...)
	return o
}

func (o *observed) first() interceptor.Attempt {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.attempts) == 0 {
		return interceptor.Attempt{}
	}
	return o.attempts[0]
}

const (
	restGetSA     = "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com"
	restCreateSA  = "https://iam.googleapis.com/v1/projects/p/serviceAccounts"
	restCreateKey = "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com/keys"
	restUnmapped  = "https://api.example.com/v1/things/a"
)

// notTemporary is an error that says retrying cannot help (as
// cloud.google.com/go/auth's *auth.Error says of a token endpoint's 400).
type notTemporary struct{}

func (notTemporary) Error() string   { return "token endpoint: 400 invalid_grant" }
func (notTemporary) Temporary() bool { return false }

func connReset(op string) error {
	return &net.OpError{Op: op, Net: "tcp", Err: os.NewSyscallError(op, syscall.ECONNRESET)}
}

// TestRESTTransportErrorsRetriedAsUnavailable (issue 19 item 1): a safe
// request whose attempt failed in the transport is retried as gRPC's
// UNAVAILABLE; a dial failure is retried even for an unsafe request; a
// failure after the request may have reached the server never is when
// unsafe; TLS verification failures and a wrapped io.EOF stay permanent.
func TestRESTTransportErrorsRetriedAsUnavailable(t *testing.T) {
	t.Parallel()
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name   string
		verb   string
		url    string
		err    error
		calls  int
		reason interceptor.Reason
		class  codes.Class
	}{
		// ported: gensupport TestShouldRetry
		{"ECONNRESET (ported: gensupport)", "GET", restGetSA, connReset("read"), 2, interceptor.Retry, codes.Transient},
		{"url.Error wrapping ECONNRESET (ported: gensupport)", "GET", restGetSA, &url.Error{Op: "Get", URL: restGetSA, Err: connReset("read")}, 2, interceptor.Retry, codes.Transient},
		{"io.ErrUnexpectedEOF (ported: gensupport)", "GET", restGetSA, io.ErrUnexpectedEOF, 2, interceptor.Retry, codes.Transient},
		{"use of closed network connection (ported: gensupport)", "GET", restGetSA, &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}, 2, interceptor.Retry, codes.Transient},
		{"io.EOF as net/http returns it: closed before a response", "GET", restGetSA, io.EOF, 2, interceptor.Retry, codes.Transient},
		{"io.EOF, unsafe create", "POST", restCreateSA, io.EOF, 1, interceptor.Unsafe, codes.Transient},
		{"wrapped net.ErrClosed", "GET", restUnmapped, fmt.Errorf("conn: %w", net.ErrClosed), 2, interceptor.Retry, codes.Transient},
		{"x/net http2.StreamError", "GET", restGetSA, http2.StreamError{StreamID: 1, Code: http2.ErrCodeInternal}, 2, interceptor.Retry, codes.Transient},
		{"x/net http2.GoAwayError", "GET", restGetSA, http2.GoAwayError{LastStreamID: 1, ErrCode: http2.ErrCodeNo}, 2, interceptor.Retry, codes.Transient},
		{"x/net http2.ConnectionError", "GET", restGetSA, http2.ConnectionError(http2.ErrCodeProtocol), 2, interceptor.Retry, codes.Transient},
		{"http2: client connection lost", "GET", restGetSA, errors.New("http2: client connection lost"), 2, interceptor.Retry, codes.Transient},
		// ported: AWS SDK v2 retry.RetryableConnectionError (dial errors)
		{"dial refused, unsafe create (ported: AWS)", "POST", restCreateSA, dialRefused, 2, interceptor.Retry, codes.Transient},
		{"dial refused, unmapped POST", "POST", restUnmapped, dialRefused, 2, interceptor.Retry, codes.Transient},
		{"DNS failure, unsafe create key", "POST", restCreateKey, &net.DNSError{Err: "no such host", Name: "iam.googleapis.com", IsNotFound: true}, 2, interceptor.Retry, codes.Transient},
		{"bare ECONNREFUSED, unmapped POST", "POST", restUnmapped, syscall.ECONNREFUSED, 2, interceptor.Retry, codes.Transient},
		// may have reached the server: never when unsafe
		{"reset after write, unsafe create", "POST", restCreateSA, connReset("read"), 1, interceptor.Unsafe, codes.Transient},
		{"reset after write, create key", "POST", restCreateKey, connReset("write"), 1, interceptor.Unsafe, codes.Transient},
		{"unexpected EOF, unmapped POST", "POST", restUnmapped, io.ErrUnexpectedEOF, 1, interceptor.Unsafe, codes.Transient},
		// ported: go-retryablehttp baseRetryPolicy (certificate not trusted)
		{"x509 unknown authority (ported: go-retryablehttp)", "GET", restGetSA, &url.Error{Op: "Get", URL: restGetSA, Err: x509.UnknownAuthorityError{}}, 1, interceptor.NotRetryable, codes.Permanent},
		{"tls.CertificateVerificationError", "GET", restGetSA, &tls.CertificateVerificationError{Err: x509.HostnameError{Host: "x"}}, 1, interceptor.NotRetryable, codes.Permanent},
		{"server refused the client certificate", "GET", restGetSA, &net.OpError{Op: "remote error", Err: tls.AlertError(42)}, 1, interceptor.NotRetryable, codes.Permanent},
		{"x509 expired", "GET", restGetSA, x509.CertificateInvalidError{Reason: x509.Expired}, 1, interceptor.NotRetryable, codes.Permanent},
		// ported: go-retryablehttp baseRetryPolicy (a request net/http refuses
		// before sending it), decided by the request, not the message
		{"unsupported protocol scheme (ported: go-retryablehttp)", "GET", "ftp://iam.googleapis.com/v1/projects/p", errors.New(`unsupported protocol scheme "ftp"`), 1, interceptor.NotRetryable, codes.Permanent},
		{"invalid header (ported: go-retryablehttp)", "GET", restGetSA + "#bad-header", errors.New(`net/http: invalid header field name "a b"`), 1, interceptor.NotRetryable, codes.Permanent},
		// decided by behaviour (issue 32 item 2): any other failure of a
		// well-formed request whose context lives is the transport's,
		// UNAVAILABLE, as go-retryablehttp retries it
		{"wrapped io.EOF", "GET", restGetSA, fmt.Errorf("read trailer: %w", io.EOF), 2, interceptor.Retry, codes.Transient},
		{"an opaque error", "GET", restGetSA, errors.New("something else"), 2, interceptor.Retry, codes.Transient},
		{"an opaque error, unsafe create", "POST", restCreateSA, errors.New("something else"), 1, interceptor.Unsafe, codes.Transient},
		{"an error that says it is not temporary (a token endpoint's 400)", "GET", restGetSA, notTemporary{}, 1, interceptor.NotRetryable, codes.Permanent},
		{"an error with a code of its own", "GET", restGetSA, status.Error(grpccodes.PermissionDenied, "no"), 1, interceptor.NotRetryable, codes.Permanent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newObserved(t)
			base := &faultBase{errs: []error{tc.err}}
			url, badHeader := strings.CutSuffix(tc.url, "#bad-header")
			req, _ := http.NewRequest(tc.verb, url, strings.NewReader(`{}`))
			if badHeader {
				req.Header["a b"] = []string{"c"}
			}
			resp, err := o.r.RoundTripper(base).RoundTrip(req)
			if base.calls != tc.calls {
				t.Fatalf("%d calls, want %d (err %v)", base.calls, tc.calls, err)
			}
			a := o.first()
			if a.Reason != tc.reason || a.Class != tc.class {
				t.Fatalf("first attempt: reason %v class %v, want %v %v", a.Reason, a.Class, tc.reason, tc.class)
			}
			if tc.calls == 2 {
				if err != nil {
					t.Fatalf("err %v after the retry", err)
				}
				resp.Body.Close()
				return
			}
			if !errors.Is(err, tc.err) || err.Error() != tc.err.Error() {
				t.Fatalf("err %v, want base's %v, unchanged in text and chain", err, tc.err)
			}
			want := grpccodes.Unknown
			if st, ok := status.FromError(tc.err); ok {
				want = st.Code()
			}
			if tc.class == codes.Transient {
				want = grpccodes.Unavailable // as gRPC reports it
			}
			if got := status.Code(err); got != want {
				t.Fatalf("status.Code(err) = %v, want %v", got, want)
			}
		})
	}
}

// TestRESTTransportErrorsGiveUpAsUnavailable: the last attempt's transport
// error reaches the caller through http.Client, its text and chain as base
// gave them, with gRPC's code UNAVAILABLE and what it says of timeouts.
func TestRESTTransportErrorsGiveUpAsUnavailable(t *testing.T) {
	t.Parallel()
	o := newObserved(t, interceptor.WithMaxAttempts(3))
	base := &faultBase{errs: []error{connReset("read"), connReset("read"), connReset("read")}}
	_, err := (&http.Client{Transport: o.r.RoundTripper(base)}).Get(restGetSA)
	if base.calls != 3 || !errors.Is(err, syscall.ECONNRESET) || status.Code(err) != grpccodes.Unavailable {
		t.Fatalf("calls %d err %v (code %v)", base.calls, err, status.Code(err))
	}
	if codes.OfError(err) != codes.Transient {
		t.Fatalf("codes.OfError(err) = %v, want Transient", codes.OfError(err))
	}
}

// TestRESTHTTP2StreamErrorRetried: a real HTTP/2 server resets the first
// stream (a handler that aborts): net/http's bundled stream error is
// retried for a safe request.
func TestRESTHTTP2StreamErrorRetried(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			panic(http.ErrAbortHandler) // RST_STREAM before any header
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	o := newObserved(t)
	resp, err := (&http.Client{Transport: o.r.RoundTripper(srv.Client().Transport)}).Get(srv.URL + "/v1/roles/viewer")
	if err != nil {
		t.Fatalf("err %v, want the retry's 200", err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, want HTTP/2", resp.Proto)
	}
	if a := o.first(); n.Load() != 2 || a.Reason != interceptor.Retry || !strings.Contains(fmt.Sprint(a.Err), "stream error") {
		t.Fatalf("%d requests, first attempt %+v", n.Load(), a)
	}
}

// TestRESTNilBodyIsEmpty (issue 19 item 2): an error response with a nil
// Body (net/http allows it from a custom transport) is an empty body.
func TestRESTNilBodyIsEmpty(t *testing.T) {
	t.Parallel()
	o := newObserved(t)
	base := &faultBase{resps: []*http.Response{answer(503, nil)}}
	resp, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, "GET", restGetSA, nil))
	if err != nil || base.calls != 2 {
		t.Fatalf("calls %d err %v", base.calls, err)
	}
	resp.Body.Close()
	base = &faultBase{resps: []*http.Response{{StatusCode: 403, Header: http.Header{}}}}
	resp, err = o.r.RoundTripper(base).RoundTrip(mustRequest(t, "GET", restGetSA, nil))
	if err != nil || resp.StatusCode != 403 {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 0 {
		t.Fatalf("body %q err %v, want empty", b, err)
	}
	resp.Body.Close()
}

// failingReader yields its text, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}
func (f *failingReader) Close() error { return nil }

// TestRESTFailedBodyReadReachesTheCaller (issue 19 item 6): a failed read of
// a failed response's body reaches the caller as that read error, after the
// bytes read before it.
func TestRESTFailedBodyReadReachesTheCaller(t *testing.T) {
	t.Parallel()
	readErr := errors.New("connection reset mid-body")
	o := newObserved(t)
	base := &faultBase{resps: []*http.Response{{StatusCode: 403, Header: http.Header{},
		Body: &failingReader{r: strings.NewReader(`{"error":{"code":403,`), err: readErr}}}}
	resp, err := (&http.Client{Transport: o.r.RoundTripper(base)}).Get(restGetSA)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, readErr) || string(b) != `{"error":{"code":403,` {
		t.Fatalf("read %q, %v; want the partial body, then %v", b, err, readErr)
	}
}

// answer is a response with Google's JSON error body for code.
func answer(code int, h http.Header) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(
		fmt.Sprintf(`{"error":{"code":%d,"message":"m"}}`, code)))}
}

func mustRequest(t testing.TB, verb, u string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(verb, u, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// onlyReader hides every method but Read (no GetBody from http.NewRequest,
// no WriterTo).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestRESTUnreplayableBodyStreamed (issue 19 item 3): a request that will
// never be replayed (unsafe, or retries disabled) goes to the transport with
// its body as it came; a replayable one longer than MaxReplayBody is sent
// once, streamed, and the Attempt says why it was not retried.
func TestRESTUnreplayableBodyStreamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		verb string
		url  string
		ctx  func(context.Context) context.Context
		opts []interceptor.Option
	}{
		{"unmapped POST", "POST", restUnmapped, nil, nil},
		{"unsafe create", "POST", restCreateSA, nil, nil},
		{"DisableContext", "POST", restGetSA + ":getIamPolicy", interceptor.DisableContext, nil},
		{"WithMaxAttempts(1)", "POST", restGetSA + ":getIamPolicy", nil, []interceptor.Option{interceptor.WithMaxAttempts(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newObserved(t, tc.opts...)
			body := io.NopCloser(onlyReader{strings.NewReader(`{"x":1}`)})
			req := mustRequest(t, tc.verb, tc.url, body)
			if tc.ctx != nil {
				req = req.WithContext(tc.ctx(req.Context()))
			}
			base := &faultBase{resps: []*http.Response{answer(503, nil)}}
			resp, err := o.r.RoundTripper(base).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if base.calls != 1 || base.reqs[0].Body != body {
				t.Fatalf("%d calls; the body sent was %T, want the caller's own", base.calls, base.reqs[0].Body)
			}
		})
	}
	for _, u := range []string{restGetSA + ":getIamPolicy", restGetSA + ":setIamPolicy"} {
		t.Run("longer than MaxReplayBody "+u[strings.LastIndexByte(u, ':'):], func(t *testing.T) { longBody(t, u) })
	}
	t.Run("unsafe streamed, dial failure", func(t *testing.T) {
		o := newObserved(t)
		base := &faultBase{errs: []error{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}}
		_, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, "POST", restUnmapped, onlyReader{strings.NewReader("x")}))
		if base.calls != 1 || !errors.Is(err, syscall.ECONNREFUSED) || o.first().Reason != interceptor.BodyNotReplayable {
			t.Fatalf("calls %d err %v attempt %+v", base.calls, err, o.first())
		}
	})
}

// longBody: a replayable request whose body without GetBody is longer than
// MaxReplayBody is sent once, whole, and not retried: BodyNotReplayable
// (also for a setIamPolicy, whose safety would depend on the body).
func longBody(t *testing.T, u string) {
	o := newObserved(t)
	big := strings.Repeat("a", interceptor.MaxReplayBody+10)
	var got strings.Builder
	base := &recvBase{dst: &got}
	req := mustRequest(t, "POST", u, onlyReader{strings.NewReader(big)})
	resp, err := o.r.RoundTripper(base).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if base.calls != 1 || got.Len() != len(big) || got.String() != big {
		t.Fatalf("%d calls, %d bytes sent, want 1 call with the whole body (%d)", base.calls, got.Len(), len(big))
	}
	if a := o.first(); a.Reason != interceptor.BodyNotReplayable || a.Class != codes.Transient || a.Retrying {
		t.Fatalf("attempt %+v, want Reason BodyNotReplayable", a)
	}
}

// recvBase reads each request's body into dst and answers 503.
type recvBase struct {
	dst   *strings.Builder
	calls int
}

func (b *recvBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.calls++
	_, _ = io.Copy(b.dst, req.Body)
	_ = req.Body.Close()
	return &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"error":{"code":503,"status":"UNAVAILABLE"}}`)), Request: req}, nil
}

// Test429RetryAfterIsRetryInfo (issue 19 item 5; issue 28): a 429 with
// Retry-After (seconds or an HTTP date) is a 429 with RetryInfo: retried,
// waiting at least the header's delay, even for a request unsafe to send
// again (a definite rejection); a 429 with neither (or a malformed header)
// is retried too, no sooner than 30 s (30 s plus a tenth of it at most).
func Test429RetryAfterIsRetryInfo(t *testing.T) {
	t.Parallel()
	quota := func(h http.Header) *http.Response {
		return &http.Response{StatusCode: 429, Header: h, Body: io.NopCloser(strings.NewReader(
			`{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`))}
	}
	for _, tc := range []struct {
		name  string
		verb  string
		url   string
		hdr   func(now time.Time) http.Header
		calls int
		wait  time.Duration
	}{
		// ported: go-retryablehttp (429 Retry-After in seconds and as a date)
		{"seconds (ported: go-retryablehttp)", "GET", restGetSA, func(time.Time) http.Header { return http.Header{"Retry-After": {"7"}} }, 2, 7 * time.Second},
		{"HTTP date (ported: go-retryablehttp)", "GET", restGetSA, func(now time.Time) http.Header {
			return http.Header{"Retry-After": {now.Add(30 * time.Second).UTC().Format(http.TimeFormat)}}
		}, 2, 30 * time.Second},
		{"unsafe create, seconds", "POST", restCreateSA, func(time.Time) http.Header { return http.Header{"Retry-After": {"2"}} }, 2, 2 * time.Second},
		{"unmapped POST, seconds", "POST", restUnmapped, func(time.Time) http.Header { return http.Header{"Retry-After": {"3"}} }, 2, 3 * time.Second},
		{"no Retry-After", "GET", restGetSA, func(time.Time) http.Header { return http.Header{} }, 2, interceptor.QuotaDelay(0, 0.5)},
		{"unsafe create, no Retry-After", "POST", restCreateSA, func(time.Time) http.Header { return http.Header{} }, 2, interceptor.QuotaDelay(0, 0.5)},
		{"malformed Retry-After", "GET", restGetSA, func(time.Time) http.Header { return http.Header{"Retry-After": {"soon"}} }, 2, interceptor.QuotaDelay(0, 0.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newObserved(t)
			base := &faultBase{resps: []*http.Response{quota(tc.hdr(o.clock.Now()))}}
			resp, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, tc.verb, tc.url, strings.NewReader(`{}`)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if base.calls != tc.calls {
				t.Fatalf("%d calls, want %d; attempt %+v", base.calls, tc.calls, o.first())
			}
			if tc.calls == 1 {
				if resp.StatusCode != 429 || o.first().Reason != interceptor.NotRetryable {
					t.Fatalf("status %d attempt %+v", resp.StatusCode, o.first())
				}
				return
			}
			// An HTTP date counts whole seconds: up to 1 s less.
			if s := o.clock.Sleeps(); len(s) != 1 || s[0] > tc.wait || s[0] <= tc.wait-time.Second {
				t.Fatalf("waits %v, want [%v]", s, tc.wait)
			}
		})
	}
	// A 503 with Retry-After is still ambiguous: an unsafe request is not
	// retried.
	o := newObserved(t)
	base := &faultBase{resps: []*http.Response{answer(503, http.Header{"Retry-After": {"2"}})}}
	resp, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, "POST", restCreateSA, strings.NewReader(`{}`)))
	if err != nil || base.calls != 1 || o.first().Reason != interceptor.Unsafe {
		t.Fatalf("503 unsafe: calls %d err %v attempt %+v", base.calls, err, o.first())
	}
	resp.Body.Close()
}

// TestRESTUserFunctionsHonoured (issue 19 item 7): WithSafeToRetry and
// WithClassifier decide the RoundTripper's requests outside the IAM table
// too, under the name the Attempt reports.
func TestRESTUserFunctionsHonoured(t *testing.T) {
	t.Parallel()
	const run = "https://api.example.com/v1/jobs/j1:run"
	var mu sync.Mutex
	var asked []string
	var reqs []any
	o := newObserved(t, interceptor.WithSafeToRetry(func(method string, req any) bool {
		mu.Lock()
		asked, reqs = append(asked, method), append(reqs, req)
		mu.Unlock()
		return method == "POST /v1/jobs/j1:run" || interceptor.SafeToRetry(method, req)
	}))
	base := &faultBase{resps: []*http.Response{answer(503, nil)}}
	resp, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, "POST", run, strings.NewReader(`{}`)))
	if err != nil || base.calls != 2 {
		t.Fatalf("POST the function calls safe: calls %d err %v attempt %+v", base.calls, err, o.first())
	}
	resp.Body.Close()
	if a := o.first(); a.Method != "POST /v1/jobs/j1:run" || len(asked) == 0 || asked[0] != a.Method {
		t.Fatalf("asked %q, Attempt.Method %q: the function must see the Attempt's name", asked, a.Method)
	}
	if _, ok := reqs[0].(*http.Request); !ok {
		t.Fatalf("req %T, want the *http.Request", reqs[0])
	}
	// The default SafeToRetry, called by the user's function, keeps GET safe.
	base = &faultBase{resps: []*http.Response{answer(503, nil)}}
	resp, err = o.r.RoundTripper(base).RoundTrip(mustRequest(t, "GET", restUnmapped, nil))
	if err != nil || base.calls != 2 {
		t.Fatalf("GET through SafeToRetry: calls %d err %v", base.calls, err)
	}
	resp.Body.Close()

	// WithClassifier: a 400 the user calls Transient, for one name.
	var seen []string
	o = newObserved(t, interceptor.WithClassifier(func(method string, err error) codes.Class {
		seen = append(seen, method)
		if method == "GET /v1/things/a" {
			return codes.Transient
		}
		return codes.OfError(err)
	}))
	base = &faultBase{resps: []*http.Response{answer(400, nil)}}
	resp, err = o.r.RoundTripper(base).RoundTrip(mustRequest(t, "GET", restUnmapped, nil))
	if err != nil || base.calls != 2 || len(seen) == 0 || seen[0] != "GET /v1/things/a" {
		t.Fatalf("classifier: calls %d err %v seen %q", base.calls, err, seen)
	}
	resp.Body.Close()
}

// TestREST500UnknownRetriedForSafe (issue 19 item 8): HTTP 500 is retried
// for a safe request, also when its body's status is UNKNOWN; never for an
// unsafe one; DATA_LOSS is Permanent.
func TestREST500UnknownRetriedForSafe(t *testing.T) {
	t.Parallel()
	answer := func(st string) *http.Response {
		body := `internal error`
		if st != "" {
			body = `{"error":{"code":500,"message":"x","status":"` + st + `"}}`
		}
		return &http.Response{StatusCode: 500, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	}
	for _, tc := range []struct {
		name, st, verb, url string
		calls               int
	}{
		{"bare 500, safe", "", "GET", restGetSA, 2},
		{"500 UNKNOWN, safe", "UNKNOWN", "GET", restGetSA, 2},
		{"500 UNKNOWN, unsafe", "UNKNOWN", "POST", restCreateSA, 1},
		{"500 DATA_LOSS, safe", "DATA_LOSS", "GET", restGetSA, 1},
	} {
		o := newObserved(t)
		base := &faultBase{resps: []*http.Response{answer(tc.st)}}
		resp, err := o.r.RoundTripper(base).RoundTrip(mustRequest(t, tc.verb, tc.url, strings.NewReader(`{}`)))
		if err != nil || base.calls != tc.calls {
			t.Errorf("%s: calls %d err %v, want %d calls", tc.name, base.calls, err, tc.calls)
			continue
		}
		resp.Body.Close()
	}
}

// TestGRPCUnknownRetriedForSafeOnly (issue 19 item 8): over gRPC, UNKNOWN
// is retried for a safe call and never for an unsafe one.
func TestGRPCUnknownRetriedForSafeOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{errs: fail(grpccodes.Unknown, 2)}
	if err := h.call(context.Background(), s, getPolicy, nil); err != nil || s.calls != 3 {
		t.Fatalf("safe: calls %d err %v", s.calls, err)
	}
	h = newHarness(t)
	s = &script{errs: fail(grpccodes.Unknown, 2)}
	if _ = h.call(context.Background(), s, "/google.iam.admin.v1.IAM/CreateServiceAccountKey", nil); s.calls != 1 || h.attempts[0].Reason != interceptor.Unsafe {
		t.Fatalf("unsafe: calls %d attempts %+v", s.calls, h.attempts)
	}
}

// TestGRPCQuotaWithRetryInfoRetriedEvenUnsafe (issue 19 item 5, the gRPC
// face): RESOURCE_EXHAUSTED with RetryInfo is a definite rejection, retried
// after its delay even for a method unsafe to replay, as a REST 429 with
// Retry-After is; UNAVAILABLE of the same method is not.
func TestGRPCQuotaWithRetryInfoRetriedEvenUnsafe(t *testing.T) {
	t.Parallel()
	const createKey = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"
	h := newHarness(t)
	s := &script{errs: []error{withRetryInfo(grpccodes.ResourceExhausted, 3*time.Second)}}
	if err := h.call(context.Background(), s, createKey, nil); err != nil || s.calls != 2 {
		t.Fatalf("RESOURCE_EXHAUSTED with RetryInfo: calls %d err %v", s.calls, err)
	}
	h = newHarness(t)
	s = &script{errs: []error{withRetryInfo(grpccodes.Unavailable, 3*time.Second)}}
	if _ = h.call(context.Background(), s, createKey, nil); s.calls != 1 || h.attempts[0].Reason != interceptor.Unsafe {
		t.Fatalf("UNAVAILABLE with RetryInfo: calls %d attempts %+v", s.calls, h.attempts)
	}
}

// TestMetricsGaveUpBodyNotReplayable: a retry that was due but whose body
// was streamed counts in gave_up with reason body_not_replayable.
func TestMetricsGaveUpBodyNotReplayable(t *testing.T) {
	t.Parallel()
	m := newMeterReader(t)
	r := restRetrier(t, vclock.New(), m.option())
	var got strings.Builder
	req := mustRequest(t, "POST", restGetSA+":getIamPolicy", onlyReader{strings.NewReader(strings.Repeat("a", interceptor.MaxReplayBody+1))})
	resp, err := r.RoundTripper(&recvBase{dst: &got}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := map[string]string{"grpc.method": "google.iam.admin.v1.IAM/GetIamPolicy", "grpc.status": "UNAVAILABLE", "iamretry.reason": "body_not_replayable"}
	if n, ok := sum(t, m.collect(), "iamretry.client.call.gave_up", want); !ok || n != 1 {
		t.Fatalf("gave_up %v: %d (found %v), want 1", want, n, ok)
	}
}

// TestGRPCQuotaRetryInfoZeroRetriedEvenUnsafe: a RetryInfo of delay 0 makes
// RESOURCE_EXHAUSTED Transient (codes.OfError) and, as over REST, a definite
// rejection: retried even for a method unsafe to replay.
func TestGRPCQuotaRetryInfoZeroRetriedEvenUnsafe(t *testing.T) {
	t.Parallel()
	const createKey = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"
	h := newHarness(t)
	s := &script{errs: []error{withRetryInfo(grpccodes.ResourceExhausted, 0)}}
	if err := h.call(context.Background(), s, createKey, nil); err != nil || s.calls != 2 {
		t.Fatalf("RESOURCE_EXHAUSTED with RetryInfo 0s: calls %d err %v attempts %+v", s.calls, err, h.attempts)
	}
}
