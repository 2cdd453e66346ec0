package interceptor_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// httpAnswer is one scripted answer: a status, a JSON error status, headers.
type httpAnswer struct {
	code   int
	status string // the JSON error body's status; "" for a success
	header http.Header
}

// scriptedBase is a base RoundTripper that answers from a script, then 200,
// and records each request's body and attempt header and whether each
// response body was closed.
type scriptedBase struct {
	mu       sync.Mutex
	answers  []httpAnswer
	bodies   []string
	attempts []string
	resps    []*trackedBody
}

type trackedBody struct {
	io.Reader
	closed bool
}

func (b *trackedBody) Close() error { b.closed = true; return nil }

func (s *scriptedBase) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body string
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		_ = req.Body.Close()
		body = string(b)
	}
	s.bodies = append(s.bodies, body)
	s.attempts = append(s.attempts, req.Header.Get(interceptor.AttemptMetadataKey))
	a := httpAnswer{code: 200}
	if i := len(s.bodies) - 1; i < len(s.answers) {
		a = s.answers[i]
	}
	text := `{"ok":true}`
	if a.code >= 400 {
		text = `{"error":{"code":` + strconv.Itoa(a.code) + `,"message":"m` + strconv.Itoa(len(s.bodies)) + `","status":"` + a.status + `"}}`
	}
	tb := &trackedBody{Reader: strings.NewReader(text)}
	s.resps = append(s.resps, tb)
	h := a.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: a.code, Header: h, Body: tb, Request: req}, nil
}

func unavailable() httpAnswer { return httpAnswer{code: 503, status: "UNAVAILABLE"} }

func restRetrier(t testing.TB, clock *vclock.Clock, opts ...interceptor.Option) *interceptor.Retrier {
	t.Helper()
	r, err := interceptor.New(append([]interceptor.Option{interceptor.WithClock(clock), interceptor.WithRandom(halfRandom)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func halfRandom() float64 { return 0.5 }

func TestRESTUnmappedRequestsGoByHTTPSemantics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb  string
		calls int
	}{{"GET", 3}, {"HEAD", 3}, {"POST", 1}, {"PUT", 1}, {"DELETE", 1}} {
		t.Run(tc.verb, func(t *testing.T) {
			base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable()}}
			clock := vclock.New()
			hc := &http.Client{Transport: restRetrier(t, clock).RoundTripper(base)}
			req, _ := http.NewRequest(tc.verb, "https://example.googleapis.com/v1/things/a", strings.NewReader("x"))
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(base.bodies) != tc.calls {
				t.Fatalf("%s: %d calls, want %d", tc.verb, len(base.bodies), tc.calls)
			}
		})
	}
}

func TestRESTBodyReplayedWithoutGetBody(t *testing.T) {
	t.Parallel()
	base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable()}}
	hc := &http.Client{Transport: restRetrier(t, vclock.New()).RoundTripper(base)}
	// An io.Reader http.NewRequest does not know: no GetBody.
	req, _ := http.NewRequest("POST", "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com:getIamPolicy",
		io.MultiReader(strings.NewReader(`{"options":`), strings.NewReader(`{"requestedPolicyVersion":3}}`)))
	if req.GetBody != nil {
		t.Fatal("the request has GetBody")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `{"options":{"requestedPolicyVersion":3}}`
	if len(base.bodies) != 3 || base.bodies[0] != want || base.bodies[1] != want || base.bodies[2] != want {
		t.Fatalf("bodies %q, want three of %q", base.bodies, want)
	}
	if got := strings.Join(base.attempts, ","); got != ",1,2" {
		t.Fatalf("attempt headers %q, want \",1,2\"", got)
	}
}

func TestRESTRetriedResponsesClosedLastReturnedUnchanged(t *testing.T) {
	t.Parallel()
	base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable(), unavailable()}}
	clock := vclock.New()
	hc := &http.Client{Transport: restRetrier(t, clock, interceptor.WithMaxAttempts(3)).RoundTripper(base)}
	resp, err := hc.Get("https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), `"message":"m3"`) {
		t.Fatalf("got %d %s, want the third answer", resp.StatusCode, body)
	}
	for i, b := range base.resps {
		if !b.closed {
			t.Errorf("response %d not closed", i+1)
		}
	}
	if got := clock.Sleeps(); len(got) != 2 || got[0] != 1500*time.Millisecond || got[1] != 2500*time.Millisecond {
		t.Fatalf("waits %v, want [1.5s 2.5s]", got)
	}
}

func TestRESTRetryAfterIsAFloor(t *testing.T) {
	t.Parallel()
	clock := vclock.New()
	date := clock.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	base := &scriptedBase{answers: []httpAnswer{
		{code: 503, status: "UNAVAILABLE", header: http.Header{"Retry-After": {"7"}}},
		{code: 503, status: "UNAVAILABLE", header: http.Header{"Retry-After": {date}}},
		{code: 503, status: "UNAVAILABLE", header: http.Header{"Retry-After": {"1"}}}, // below the backoff: the backoff wins
	}}
	hc := &http.Client{Transport: restRetrier(t, clock).RoundTripper(base)}
	resp, err := hc.Get("https://iam.googleapis.com/v1/roles/viewer")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := clock.Sleeps()
	if len(got) != 3 || got[0] != 7*time.Second || got[1] < 12*time.Second || got[1] > 13*time.Second || got[2] != 4500*time.Millisecond {
		t.Fatalf("waits %v, want [7s ~13s 4.5s] (the date is 20 s after the start, 7 s of which passed)", got)
	}
}

func TestRESTContextFlagsAndOwnership(t *testing.T) {
	t.Parallel()
	get := func(ctx context.Context, r *interceptor.Retrier, base *scriptedBase) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com", nil)
		resp, err := (&http.Client{Transport: r.RoundTripper(base)}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return len(base.bodies)
	}
	clock := vclock.New()
	r := restRetrier(t, clock)
	notFound := func() *scriptedBase {
		return &scriptedBase{answers: []httpAnswer{{code: 404, status: "NOT_FOUND"}}}
	}
	if n := get(context.Background(), r, notFound()); n != 1 {
		t.Errorf("404 without the opt-in: %d calls, want 1", n)
	}
	if n := get(interceptor.RetryNotFoundContext(context.Background()), r, notFound()); n != 2 {
		t.Errorf("404 with RetryNotFoundContext: %d calls, want 2", n)
	}
	if n := get(interceptor.DisableContext(context.Background()), r, &scriptedBase{answers: []httpAnswer{unavailable()}}); n != 1 {
		t.Errorf("503 with DisableContext: %d calls, want 1", n)
	}
	// Under Retrier.Do the RoundTripper passes failures through: Do retries.
	base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable()}}
	err := r.Do(context.Background(), "get", func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://iam.googleapis.com/v1/roles/viewer", nil)
		resp, err := (&http.Client{Transport: r.RoundTripper(base)}).Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return googleapi.CheckResponse(resp)
	})
	if err != nil || len(base.bodies) != 3 || strings.Join(base.attempts, ",") != ",," {
		t.Errorf("under Do: err %v, %d calls with attempt headers %q; want nil, 3 calls, none marked by the RoundTripper", err, len(base.bodies), base.attempts)
	}
}

func TestRESTCancelEndsWaitAtOnce(t *testing.T) {
	t.Parallel()
	base := &scriptedBase{answers: []httpAnswer{unavailable()}}
	// The context is cancelled 20 ms after the failed attempt is reported,
	// so during the hour's wait, never before the attempt (a timer started
	// with the request could fire first on a busy machine: the 503 would
	// then be the answer, not an error).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := interceptor.New(interceptor.WithBackoff(interceptor.Backoff{Initial: time.Hour, Multiplier: 2, Max: time.Hour}), interceptor.WithDeadline(2*time.Hour),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				time.AfterFunc(20*time.Millisecond, cancel)
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://iam.googleapis.com/v1/roles/viewer", nil)
	start := time.Now()
	_, err = (&http.Client{Transport: r.RoundTripper(base)}).Do(req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want one wrapping context.Canceled", err)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 503 {
		t.Fatalf("err %v does not wrap the last 503", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	if !base.resps[0].closed {
		t.Fatal("the last response was not closed")
	}
}

// okBase answers 200 with one shared response: it allocates nothing.
type okBase struct{ resp *http.Response }

func (b okBase) RoundTrip(*http.Request) (*http.Response, error) { return b.resp, nil }

func TestRESTSuccessPathAllocatesNothing(t *testing.T) {
	base := okBase{&http.Response{StatusCode: 200, Body: http.NoBody}}
	r, err := interceptor.New(interceptor.WithObserver(func(context.Context, interceptor.Attempt) {}))
	if err != nil {
		t.Fatal(err)
	}
	tr := r.RoundTripper(base)
	req, _ := http.NewRequest("POST", "https://cloudresourcemanager.googleapis.com/v3/projects/p:getIamPolicy", strings.NewReader(`{}`))
	if n := testing.AllocsPerRun(100, func() { _, _ = tr.RoundTrip(req) }); n != 0 {
		t.Fatalf("success path: %v allocations, want 0", n)
	}
}

func BenchmarkRESTSuccess(b *testing.B) {
	base := okBase{&http.Response{StatusCode: 200, Body: http.NoBody}}
	r, err := interceptor.New()
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "https://cloudresourcemanager.googleapis.com/v3/projects/p:getIamPolicy", strings.NewReader(`{}`))
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"bare", base}, {"roundtripper", r.RoundTripper(base)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = c.rt.RoundTrip(req)
			}
		})
	}
}

// BenchmarkRESTLoopback: a getIamPolicy POST over loopback HTTP to a server
// answering 200, through the bare transport and through the RoundTripper.
func BenchmarkRESTLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte(`{"version":1,"etag":"BwX="}`))
	}))
	defer srv.Close()
	r, err := interceptor.New()
	if err != nil {
		b.Fatal(err)
	}
	bare := srv.Client().Transport
	for _, c := range []struct {
		name string
		rt   http.RoundTripper
	}{{"bare", bare}, {"roundtripper", r.RoundTripper(bare)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			hc := &http.Client{Transport: c.rt}
			for b.Loop() {
				req, _ := http.NewRequest("POST", srv.URL+"/v3/projects/p:getIamPolicy", strings.NewReader(`{}`))
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// TestRESTRetryDeadlineAndAttemptCapHold pins the Retrier's retry deadline
// and attempt cap on the REST face, as on the gRPC one: a GET that answers
// 503 for good is retried on the documented schedule until the next wait
// would end past the 60 s default deadline (6 attempts, 33.5 s with a
// random fraction of 0.5), and WithMaxAttempts(2) stops it at 2.
func TestRESTRetryDeadlineAndAttemptCapHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		opts     []interceptor.Option
		attempts int
		elapsed  time.Duration
	}{
		{"default deadline", nil, 6, 33500 * time.Millisecond},
		{"max attempts 2", []interceptor.Option{interceptor.WithMaxAttempts(2)}, 2, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := make([]httpAnswer, 20)
			for i := range answers {
				answers[i] = unavailable()
			}
			base := &scriptedBase{answers: answers}
			clock := vclock.New()
			hc := &http.Client{Transport: restRetrier(t, clock, tc.opts...).RoundTripper(base)}
			start := clock.Now()
			resp, err := hc.Get("https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 503 || len(base.attempts) != tc.attempts || clock.Since(start) != tc.elapsed {
				t.Fatalf("status %d after %d attempts over %v, want 503 after %d over %v",
					resp.StatusCode, len(base.attempts), clock.Since(start), tc.attempts, tc.elapsed)
			}
		})
	}
}
