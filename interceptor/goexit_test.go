package interceptor_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
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

// TestGoexitInHooks runs its checks in a child process (a hang
// there cannot take this test binary down): runtime.Goexit (a t.FailNow)
// in an observer, a logger or a classifier on the interceptor, the
// RoundTripper (with and without a per-attempt timeout) and Retrier.Do
// ends the caller's call by ending its goroutine (the Goexit goes on, as a
// panic does), at once; nothing is left behind (the REST attempt's body is
// closed and its context cancelled); the same Retrier then serves the
// next call.
func TestGoexitInHooks(t *testing.T) {
	t.Parallel()
	if os.Getenv("IAMRETRY_GOEXIT_HOOKS_CHILD") == "1" {
		goexitHooksChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoexitInHooks$", "-test.v", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "IAMRETRY_GOEXIT_HOOKS_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "goexit hooks child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func goexitHooksChild(t *testing.T) {
	hooks := map[string]func(armed *atomic.Bool) interceptor.Option{
		"observer": func(armed *atomic.Bool) interceptor.Option {
			return interceptor.WithObserver(func(context.Context, interceptor.Attempt) {
				if armed.CompareAndSwap(true, false) {
					runtime.Goexit()
				}
			})
		},
		"logger": func(armed *atomic.Bool) interceptor.Option {
			return interceptor.WithLogger(logging.LoggerFunc(func(context.Context, logging.Level, string, ...any) {
				if armed.CompareAndSwap(true, false) {
					runtime.Goexit()
				}
			}))
		},
		"classifier": func(armed *atomic.Bool) interceptor.Option {
			return interceptor.WithClassifier(func(_ string, err error) codes.Class {
				if armed.CompareAndSwap(true, false) {
					runtime.Goexit()
				}
				return codes.OfError(err)
			})
		},
	}
	// Each face makes a call that fails once with UNAVAILABLE, then
	// succeeds; check says what the call left behind.
	type face func(r *interceptor.Retrier) (call func() error, check func() error)
	var perAttemptOn bool // the Retrier of the current run has WithPerAttemptTimeout
	rest := func() face {
		return func(r *interceptor.Retrier) (func() error, func() error) {
			sb := &scriptedBase{answers: []httpAnswer{unavailable()}}
			var ctxs []context.Context
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				ctxs = append(ctxs, req.Context())
				return sb.RoundTrip(req)
			})
			call := func() error {
				req, _ := http.NewRequest(http.MethodGet, "https://iam.googleapis.com/v1/projects/p/roles", nil)
				resp, err := r.RoundTripper(base).RoundTrip(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return nil
			}
			check := func() error {
				for i, b := range sb.resps {
					if !b.closed {
						return fmt.Errorf("response %d left open", i+1)
					}
				}
				if perAttemptOn {
					for i, c := range ctxs {
						if c.Err() == nil {
							return fmt.Errorf("attempt %d's context left alive", i+1)
						}
					}
				}
				return nil
			}
			return call, check
		}
	}
	faces := map[string]face{
		"interceptor": func(r *interceptor.Retrier) (func() error, func() error) {
			s := &script{errs: fail(grpccodes.Unavailable, 1)}
			return func() error { return callWith(r, s.invoke) }, func() error { return nil }
		},
		"Do": func(r *interceptor.Retrier) (func() error, func() error) {
			n := 0
			return func() error {
				return r.Do(context.Background(), "op", func(context.Context) error {
					if n++; n == 1 {
						return status.Error(grpccodes.Unavailable, "down")
					}
					return nil
				})
			}, func() error { return nil }
		},
		"RoundTripper": rest(),
	}
	for _, perAttempt := range []bool{false, true} {
		for hname, hook := range hooks {
			for fname, f := range faces {
				var armed atomic.Bool
				opts := []interceptor.Option{interceptor.WithClock(vclock.New()), fixedRandom(0.5), hook(&armed)}
				if perAttempt {
					opts = append(opts, interceptor.WithPerAttemptTimeout(time.Hour))
				}
				r, err := interceptor.New(opts...)
				if err != nil {
					t.Fatal(err)
				}
				perAttemptOn = perAttempt
				call, check := f(r)
				armed.Store(true)
				ended := make(chan string, 1)
				go func() {
					returned := false
					defer func() {
						if !returned {
							if p := recover(); p != nil {
								ended <- fmt.Sprint("panic: ", p)
							} else {
								ended <- "goexit"
							}
						}
					}()
					err := call()
					returned = true
					ended <- fmt.Sprint("returned: ", err)
				}()
				select {
				case got := <-ended:
					if got != "goexit" {
						t.Fatalf("%s in %s (per-attempt %v): the call ended with %s, want the Goexit to go on", hname, fname, perAttempt, got)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("%s in %s (per-attempt %v): the call hangs", hname, fname, perAttempt)
				}
				if err := check(); err != nil {
					t.Fatalf("%s in %s (per-attempt %v): %v", hname, fname, perAttempt, err)
				}
				call, _ = f(r)
				if err := call(); err != nil {
					t.Fatalf("%s in %s (per-attempt %v): the call after the Goexit: %v", hname, fname, perAttempt, err)
				}
			}
		}
	}
	fmt.Println("goexit hooks child: ok")
}
