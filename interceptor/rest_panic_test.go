package interceptor_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// panickingBase records the context of the request it is given, then
// panics (a base transport with a bug).
type panickingBase struct{ ctx context.Context }

func (b *panickingBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b.ctx = req.Context()
	panic("boom: base")
}

// mustPanic runs f and returns what it panicked with; a call that returns
// fails the test.
func mustPanic(t *testing.T, f func()) (p any) {
	t.Helper()
	defer func() { p = recover() }()
	f()
	t.Fatal("no panic")
	return nil
}

// A base transport that panics under a per-attempt timeout: the panic
// reaches the caller and the attempt's context is cancelled on the way
// (before: its timer lived on until the timeout, an hour here).
func TestRESTBasePanicCancelsAttemptContext(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"first attempt", "retry"} {
		t.Run(name, func(t *testing.T) {
			r := restRetrier(t, vclock.New(), interceptor.WithPerAttemptTimeout(time.Hour))
			pb := &panickingBase{}
			var base http.RoundTripper = pb
			if name == "retry" {
				// The first attempt fails with 503; the retry panics.
				sb := &scriptedBase{answers: []httpAnswer{unavailable()}}
				base = roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if req.Header.Get(interceptor.AttemptMetadataKey) == "" {
						return sb.RoundTrip(req)
					}
					return pb.RoundTrip(req)
				})
			}
			req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
			if p := mustPanic(t, func() { _, _ = r.RoundTripper(base).RoundTrip(req) }); p != "boom: base" {
				t.Fatalf("recovered %v, want the base's panic", p)
			}
			if pb.ctx == nil || pb.ctx.Err() != context.Canceled {
				t.Fatalf("the panicking attempt's context: err %v, want it cancelled", pb.ctx.Err())
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// An observer or logger that panics on the REST face after a failed
// attempt: the panic reaches the caller, and the failed attempt's
// response body is closed on the way (before: it stayed open, its
// connection never reused; with a per-attempt timeout its context lived on).
func TestRESTHookPanicClosesLastBody(t *testing.T) {
	t.Parallel()
	hooks := map[string]interceptor.Option{
		"observer": interceptor.WithObserver(func(context.Context, interceptor.Attempt) { panic("boom: hook") }),
		"logger":   interceptor.WithLogger(logging.LoggerFunc(func(context.Context, logging.Level, string, ...any) { panic("boom: hook") })),
	}
	for hname, h := range hooks {
		for _, perAttempt := range []time.Duration{0, time.Hour} {
			t.Run(hname+"/perAttempt="+perAttempt.String(), func(t *testing.T) {
				opts := []interceptor.Option{h}
				if perAttempt > 0 {
					opts = append(opts, interceptor.WithPerAttemptTimeout(perAttempt))
				}
				r := restRetrier(t, vclock.New(), opts...)
				sb := &scriptedBase{answers: []httpAnswer{unavailable()}}
				var actx context.Context
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					actx = req.Context()
					return sb.RoundTrip(req)
				})
				req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
				if p := mustPanic(t, func() { _, _ = r.RoundTripper(base).RoundTrip(req) }); p != "boom: hook" {
					t.Fatalf("recovered %v, want the hook's panic", p)
				}
				if len(sb.resps) != 1 {
					t.Fatalf("%d attempts, want 1", len(sb.resps))
				}
				if !sb.resps[0].closed {
					t.Fatal("the failed attempt's response body was left open")
				}
				if perAttempt > 0 && actx.Err() != context.Canceled {
					t.Fatalf("the attempt's context: err %v, want it cancelled", actx.Err())
				}
			})
		}
	}
}
