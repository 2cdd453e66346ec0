package interceptor_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

const rolesURL = "https://iam.googleapis.com/v1/projects/p/roles"

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Malformed requests that a base RoundTripper accepts or refuses: the
// RoundTripper never panics on them, and retries what it can.
func TestRESTMalformedRequests(t *testing.T) {
	t.Parallel()
	clock := vclock.New()
	r := restRetrier(t, clock)

	// A request built by hand without a Header, to a base that accepts it
	// (a test double, a custom transport): retried like any other.
	base := &scriptedBase{answers: []httpAnswer{unavailable()}}
	req := &http.Request{Method: http.MethodGet, URL: mustURL(t, rolesURL)}
	resp, err := r.RoundTripper(base).RoundTrip(req)
	if err != nil || resp.StatusCode != 200 || len(base.bodies) != 2 {
		t.Fatalf("nil Header: resp %v err %v, %d attempts", resp, err, len(base.bodies))
	}
	resp.Body.Close()
	if req.Header != nil {
		t.Fatal("the caller's request was changed")
	}

	// No URL: http.DefaultTransport refuses it with an error; so must we,
	// without a panic, after the base refused it.
	req = &http.Request{Method: http.MethodGet, Header: http.Header{}}
	resp, err = r.RoundTripper(errBase{}).RoundTrip(req)
	if err == nil || resp != nil {
		t.Fatalf("nil URL: resp %v err %v, want the base's error", resp, err)
	}
}

type errBase struct{}

func (errBase) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("http: nil Request.URL")
}

// failingGetBody's GetBody fails after the first call.
func TestRESTGetBodyFailsOnRetry(t *testing.T) {
	t.Parallel()
	clock := vclock.New()
	r := restRetrier(t, clock)
	base := &scriptedBase{answers: []httpAnswer{unavailable()}}
	req, _ := http.NewRequest(http.MethodPost, "https://iam.googleapis.com/v1/projects/p/roles/r:undelete", strings.NewReader(`{"etag":"BwX="}`))
	calls := 0
	orig := req.GetBody
	req.GetBody = func() (io.ReadCloser, error) {
		if calls++; calls > 1 {
			return nil, errors.New("body gone")
		}
		return orig()
	}
	resp, err := r.RoundTripper(base).RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	// Either the 503 (not retried) or GetBody's error: never a panic, never
	// a retry sent without its body.
	for i, b := range base.bodies {
		if b != `{"etag":"BwX="}` {
			t.Fatalf("attempt %d sent body %q", i+1, b)
		}
	}
	_ = err
}

// Error bodies: garbage, empty, truncated JSON, huge. The classification
// falls back to the HTTP status; the final response's body reads whole
// from the start, however long.
func TestRESTErrorBodies(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 3<<20)
	for name, body := range map[string]string{
		"empty":         "",
		"garbage":       "\x00\xff<html>",
		"truncated":     `{"error":{"code":503,"status":"UNAVAIL`,
		"status number": `{"error":{"code":503,"status":14}}`,
		"huge":          huge,
	} {
		clock := vclock.New()
		r := restRetrier(t, clock, interceptor.WithMaxAttempts(3))
		sent := 0
		base := rtFunc(func(req *http.Request) (*http.Response, error) {
			sent++
			return &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
		})
		req, _ := http.NewRequest(http.MethodGet, rolesURL, nil)
		resp, err := r.RoundTripper(base).RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if sent != 3 || resp.StatusCode != 503 || string(got) != body {
			t.Fatalf("%s: %d sent, status %d, body %d bytes (want %d)", name, sent, resp.StatusCode, len(got), len(body))
		}
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Retry-After at its extremes: huge (the wait cannot fit the deadline: the
// 503 is returned at once), negative and garbage (ignored: the backoff),
// a date in the past (no floor).
func TestRESTRetryAfterExtremes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v     string
		sent  int
		waits int
	}{
		{"99999999999999999999", 1, 0},
		{"9223372036", 1, 0},
		{"-5", 2, 1},
		{"soon", 2, 1},
		{"Mon, 02 Jan 2006 15:04:05 GMT", 2, 1},
		{"", 2, 1},
	} {
		clock := vclock.New()
		r := restRetrier(t, clock)
		h := http.Header{}
		if tc.v != "" {
			h.Set("Retry-After", tc.v)
		}
		base := &scriptedBase{answers: []httpAnswer{{code: 503, status: "UNAVAILABLE", header: h}}}
		req, _ := http.NewRequest(http.MethodGet, rolesURL, nil)
		resp, err := r.RoundTripper(base).RoundTrip(req)
		if err != nil {
			t.Fatalf("Retry-After %q: %v", tc.v, err)
		}
		resp.Body.Close()
		if len(base.bodies) != tc.sent || len(clock.Sleeps()) != tc.waits {
			t.Errorf("Retry-After %q: %d sent, waits %v; want %d sent, %d waits", tc.v, len(base.bodies), clock.Sleeps(), tc.sent, tc.waits)
		}
		if tc.waits == 1 && clock.Sleeps()[0] > 2*time.Second {
			t.Errorf("Retry-After %q: waited %v, want the backoff's 1.5 s", tc.v, clock.Sleeps()[0])
		}
	}
}

// Cancelled during a REST wait: the error wraps the context's error and the
// server's *googleapi.Error; the 503's body is closed; nothing more is sent.
func TestRESTCancelDuringWait(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	clk := &cancellingClock{Clock: vclock.New(), at: 1, cancel: cancel, noticed: false}
	r, err := interceptor.New(interceptor.WithClock(clk), fixedRandom(0.5))
	if err != nil {
		t.Fatal(err)
	}
	base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable()}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rolesURL, nil)
	resp, err := r.RoundTripper(base).RoundTrip(req)
	var ge *googleapi.Error
	if resp != nil || !errors.Is(err, context.Canceled) || !errors.As(err, &ge) || ge.Code != 503 {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if len(base.bodies) != 1 || !base.resps[0].closed {
		t.Fatalf("%d sent, first body closed %v", len(base.bodies), base.resps[0].closed)
	}
}
