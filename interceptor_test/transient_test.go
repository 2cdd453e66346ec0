package interceptor_test

// Transient failures (HTTP 500, 502/503, 504) retried with the documented
// truncated exponential backoff, and the limits that end the retries: the
// retry deadline, the attempt cap and the caller's context deadline.

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// transientCodes are the codes the guidance retries, each as the fake sends
// it: DEADLINE_EXCEEDED is the server's 504, injected while the caller's own
// context is alive.
var transientCodes = []codes.Code{codes.Unavailable, codes.Internal, codes.DeadlineExceeded}

// TestTransientRetriedToSuccess fails each transient code three times before
// the handler runs, through each kind of client: the fourth attempt lands,
// after exactly the documented waits min(2^n + 0.5, 32) s = 1.5, 2.5, 4.5,
// and the fake saw four calls carrying x-retry-attempt "", "1", "2", "3".
func TestTransientRetriedToSuccess(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		for _, code := range transientCodes {
			t.Run(k.name+"/"+code.String(), func(t *testing.T) {
				g := newRig(t, withGRPC(), failedAttemptsOnly())
				g.fake.FailNext(k.readMethod, 3, code)

				if err := k.read(context.Background(), g); err != nil {
					t.Fatalf("read after 3 %v: %v", code, err)
				}

				waits := secs(1.5, 2.5, 4.5)
				wantSleeps(t, g, waits)
				wantLog(t, g, k.readMethod, waits, code, code, code, codes.OK)
				as := g.Attempts()
				if len(as) != 3 {
					t.Fatalf("observed %d attempts, want 3: %+v", len(as), as)
				}
				var elapsed time.Duration
				for i, a := range as {
					if a.Method != string(k.readMethod) || a.N != i+1 || !a.Retrying || a.Reason != interceptor.Retry ||
						a.Class != iamcodes.Transient || a.Wait != waits[i] || a.Elapsed != elapsed {
						t.Errorf("attempt %d: %+v; want method %s, retrying after %v, elapsed %v, class Transient",
							i+1, a, k.readMethod, waits[i], elapsed)
					}
					wantInjected(t, a.Err, code)
					elapsed += waits[i]
				}
			})
		}
	}
}

// TestTransientTruncatedAtMaxBackoff runs a longer outage under the
// guidance's CI/CD deadline of 300 s: the waits double up to
// maximum_backoff, 32 s, and stay there.
//
// The call carries its own 10-minute context deadline. Without one, the
// GAPIC admin client puts its default 60 s timeout on GetServiceAccount (a
// wall-clock context deadline, which DisableGAXRetries keeps on purpose),
// and a context deadline, when sooner, rules over the Retrier's own: in
// production that 60 s cuts a 300 s retry deadline short.
func TestTransientTruncatedAtMaxBackoff(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithDeadline(300*time.Second)))
			g.fake.FailNext(k.readMethod, 8, codes.Unavailable)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()

			if err := k.read(ctx, g); err != nil {
				t.Fatalf("read after 8 UNAVAILABLE: %v", err)
			}
			waits := secs(1.5, 2.5, 4.5, 8.5, 16.5, 32, 32, 32)
			wantSleeps(t, g, waits)
			wantLog(t, g, k.readMethod, waits, append(repeat(codes.Unavailable, 8), codes.OK)...)
		})
	}
}

// TestRetryDeadlineLimit: with WithDeadline(20s) the waits 1.5, 2.5, 4.5 and
// 8.5 s (17 s in all) are made; the next, 16.5 s, would end after 20 s, so it
// is not started and the call ends at once with the server's last error,
// its code intact.
func TestRetryDeadlineLimit(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithDeadline(20*time.Second)))
			g.fake.FailNext(k.readMethod, 10, codes.Unavailable)

			err := k.read(context.Background(), g)
			wantInjected(t, err, codes.Unavailable)

			waits := secs(1.5, 2.5, 4.5, 8.5)
			wantSleeps(t, g, waits)
			wantLog(t, g, k.readMethod, waits, repeat(codes.Unavailable, 5)...)
			last := wantLastAttempt(t, g, 5, interceptor.DeadlineReached)
			if last.Elapsed != 17*time.Second {
				t.Errorf("gave up %v after the first failure, want 17s", last.Elapsed)
			}
			if next := g.retrier.Backoff().Delay(4, 0.5); last.Elapsed+next <= 20*time.Second {
				t.Errorf("the next wait %v would have fit in the 20s deadline", next)
			}
		})
	}
}

// TestMaxAttemptsLimit: WithMaxAttempts(3) makes exactly three calls.
func TestMaxAttemptsLimit(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithMaxAttempts(3)))
			g.fake.FailNext(k.readMethod, 10, codes.Internal)

			err := k.read(context.Background(), g)
			wantInjected(t, err, codes.Internal)

			waits := secs(1.5, 2.5)
			wantSleeps(t, g, waits)
			wantLog(t, g, k.readMethod, waits, codes.Internal, codes.Internal, codes.Internal)
			if n := g.fake.CountCalls(k.readMethod); n != 3 {
				t.Fatalf("fake saw %d calls, want 3", n)
			}
			wantLastAttempt(t, g, 3, interceptor.MaxAttempts)
		})
	}
}

// TestContextDeadlineShorterThanSchedule gives the call a 10 s context
// deadline, sooner than the 60 s retry deadline: waits 1.5, 2.5 and 4.5 s
// end by 8.5 s; the next, 8.5 s, would end after the context's deadline, so
// it is never started and the call fails fast with the server's own error
// (UNAVAILABLE, not the context's DEADLINE_EXCEEDED), while the context
// is still alive.
func TestContextDeadlineShorterThanSchedule(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			g.fake.FailNext(k.readMethod, 10, codes.Unavailable)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			dl, _ := ctx.Deadline()

			err := k.read(ctx, g)
			wantInjected(t, err, codes.Unavailable)
			if ctx.Err() != nil {
				t.Fatalf("the context ended (%v): the test ran too slowly to tell fail-fast from a timeout", ctx.Err())
			}

			waits := secs(1.5, 2.5, 4.5)
			wantSleeps(t, g, waits)
			wantLog(t, g, k.readMethod, waits, repeat(codes.Unavailable, 4)...)
			wantLastAttempt(t, g, 4, interceptor.ContextDeadline)
			// The virtual clock started at the wall time the rig was made,
			// just before the context: every wait made ended before the
			// context's deadline, the one refused would have ended after it.
			now := g.clock.Now()
			if !now.Before(dl) {
				t.Errorf("waited until %v past the context deadline", now.Sub(dl))
			}
			if next := g.retrier.Backoff().Delay(3, 0.5); now.Add(next).Before(dl) {
				t.Errorf("the refused wait %v would have ended %v before the context deadline", next, dl.Sub(now.Add(next)))
			}
		})
	}
}

// TestRetryInfoFloor: a google.rpc.RetryInfo detail of 10 s on the server's
// errors makes every wait at least 10 s (the documented 1.5 and 2.5 s are
// shorter, so both waits are exactly 10 s).
func TestRetryInfoFloor(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			g.fake.SetRetryInfo(10 * time.Second)
			g.fake.FailNext(k.readMethod, 2, codes.Unavailable)

			if err := k.read(context.Background(), g); err != nil {
				t.Fatalf("read after 2 UNAVAILABLE with RetryInfo: %v", err)
			}
			for i, w := range g.clock.Sleeps() {
				if w < 10*time.Second {
					t.Errorf("wait %d is %v, below the server's RetryInfo of 10s", i+1, w)
				}
			}
			waits := secs(10, 10)
			wantSleeps(t, g, waits)
			wantLog(t, g, k.readMethod, waits, codes.Unavailable, codes.Unavailable, codes.OK)
			for i, a := range g.Attempts() {
				if a.Wait != waits[i] || !a.Retrying {
					t.Errorf("attempt %d: %+v, want a retry after %v", i+1, a, waits[i])
				}
			}
		})
	}
}

// repeat returns n copies of c.
func repeat(c codes.Code, n int) []codes.Code {
	out := make([]codes.Code, n)
	for i := range out {
		out[i] = c
	}
	return out
}
