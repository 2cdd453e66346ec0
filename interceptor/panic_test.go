package interceptor_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// onceBomb panics the first time it is armed and asked, then never again.
type onceBomb struct{ fired atomic.Bool }

func (b *onceBomb) maybe(what string) {
	if b.fired.CompareAndSwap(false, true) {
		panic("boom: " + what)
	}
}

type bombClock struct {
	*vclock.Clock
	b        *onceBomb
	now, slp bool
}

func (c bombClock) Now() time.Time {
	if c.now {
		c.b.maybe("clock.Now")
	}
	return c.Clock.Now()
}

func (c bombClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.slp {
		c.b.maybe("clock.Sleep")
	}
	return c.Clock.Sleep(ctx, d)
}

// A panic in any user code the Retrier calls (observer, logger,
// classifier, safe-to-retry func, clock, random source) reaches the caller
// in its own goroutine, where it can be recovered; afterwards the same
// Retrier works (nothing it shares, the budget above all, is left locked
// or spent), on every face.
func TestPanicsInUserCodeReachTheCaller(t *testing.T) {
	t.Parallel()
	type hook func(b *onceBomb) []interceptor.Option
	hooks := map[string]hook{
		"observer": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithObserver(func(context.Context, interceptor.Attempt) { b.maybe("observer") })}
		},
		"logger": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithLogger(logging.LoggerFunc(func(context.Context, logging.Level, string, ...any) { b.maybe("logger") }))}
		},
		"classifier": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithClassifier(func(m string, err error) codes.Class { b.maybe("classifier"); return codes.OfError(err) })}
		},
		"safe": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithSafeToRetry(func(string, any) bool { b.maybe("safe"); return true })}
		},
		"random": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithRandom(func() float64 { b.maybe("random"); return 0.5 })}
		},
		"clock.Now": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithClock(bombClock{Clock: vclock.New(), b: b, now: true})}
		},
		"clock.Sleep": func(b *onceBomb) []interceptor.Option {
			return []interceptor.Option{interceptor.WithClock(bombClock{Clock: vclock.New(), b: b, slp: true})}
		},
	}
	faces := map[string]func(r *interceptor.Retrier) error{
		"interceptor": func(r *interceptor.Retrier) error {
			s := &script{errs: fail(grpccodes.Unavailable, 2)}
			return callWith(r, s.invoke)
		},
		"interceptor per-attempt": func(r *interceptor.Retrier) error {
			s := &script{errs: fail(grpccodes.Unavailable, 2)}
			return r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, s.invoke, interceptor.CallPerAttemptTimeout(time.Hour))
		},
		"Do": func(r *interceptor.Retrier) error {
			n := 0
			return r.Do(context.Background(), "op", func(context.Context) error {
				if n++; n <= 2 {
					return status.Error(grpccodes.Unavailable, "down")
				}
				return nil
			})
		},
		"RoundTripper": func(r *interceptor.Retrier) error {
			base := &scriptedBase{answers: []httpAnswer{unavailable(), unavailable()}}
			req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com", nil)
			resp, err := r.RoundTripper(base).RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					return status.Errorf(grpccodes.Unknown, "status %d", resp.StatusCode)
				}
			}
			return err
		},
	}
	for hname, h := range hooks {
		for fname, face := range faces {
			if hname == "safe" && fname == "Do" {
				continue // Do does not ask the safe-to-retry func: its caller vouches for f
			}
			b := &onceBomb{}
			opts := append([]interceptor.Option{interceptor.WithClock(vclock.New()), fixedRandom(0.5)}, h(b)...)
			r, err := interceptor.New(opts...)
			if err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					p := recover()
					if p == nil || !strings.Contains(p.(string), hname) {
						t.Errorf("%s in %s: recovered %v, want the hook's panic in the caller's goroutine", hname, fname, p)
					}
				}()
				_ = face(r)
			}()
			if err := face(r); err != nil {
				t.Errorf("%s in %s: the call after the panic failed: %v", hname, fname, err)
			}
		}
	}
}
