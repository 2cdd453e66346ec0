package interceptor_test

// Per-call overrides (issue 10 item 11): CallDeadline, CallMaxAttempts and
// CallPerAttemptTimeout through real gRPC over bufconn, on the virtual
// clock, through each kind of client.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// TestCallDeadlineReplacesTheRetriersDeadline: a Retrier with a 5 s retry
// deadline gives up after 1.5 + 2.5 s; the same call with CallDeadline(300s)
// rides out 5 failures (1.5 + 2.5 + 4.5 + 8.5 + 16.5 s); with
// CallDeadline(3s) a default Retrier stops after the first wait.
func TestCallDeadlineReplacesTheRetriersDeadline(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithDeadline(5*time.Second)))
			g.fake.FailNext(k.readMethod, 5, codes.Unavailable)
			if err := k.read(context.Background(), g, interceptor.CallDeadline(300*time.Second)); err != nil {
				t.Fatalf("read with CallDeadline(300s): %v", err)
			}
			wantSleeps(t, g, secs(1.5, 2.5, 4.5, 8.5, 16.5))

			g.reset()
			g.fake.FailNext(k.readMethod, 5, codes.Unavailable)
			err := k.read(context.Background(), g)
			wantInjected(t, err, codes.Unavailable)
			wantSleeps(t, g, secs(1.5, 2.5))
			g.fake.ResetFaults()

			d := newRig(t, withGRPC(), failedAttemptsOnly())
			d.fake.FailNext(k.readMethod, 5, codes.Unavailable)
			err = k.read(context.Background(), d, interceptor.CallDeadline(3*time.Second))
			wantInjected(t, err, codes.Unavailable)
			wantSleeps(t, d, secs(1.5))
			as := d.Attempts()
			if last := as[len(as)-1]; last.Reason != interceptor.DeadlineReached {
				t.Fatalf("last attempt %+v, want DeadlineReached", last)
			}
		})
	}
}

// TestCallMaxAttemptsReplacesTheRetriersCap: CallMaxAttempts(2) makes two
// attempts on a Retrier without a cap; CallMaxAttempts(0) lifts a Retrier's
// cap of 1.
func TestCallMaxAttemptsReplacesTheRetriersCap(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			g.fake.FailNext(k.readMethod, 5, codes.Internal)
			err := k.read(context.Background(), g, interceptor.CallMaxAttempts(2))
			wantInjected(t, err, codes.Internal)
			if n := len(g.callsOf(k.readMethod)); n != 2 {
				t.Fatalf("fake saw %d calls, want 2", n)
			}
			as := g.Attempts()
			if len(as) != 2 || as[1].Reason != interceptor.MaxAttempts {
				t.Fatalf("attempts %+v, want 2 ending in MaxAttempts", as)
			}

			one := newRig(t, withGRPC(), failedAttemptsOnly(), withRetrier(interceptor.WithMaxAttempts(1)))
			one.fake.FailNext(k.readMethod, 2, codes.Internal)
			if err := k.read(context.Background(), one, interceptor.CallMaxAttempts(0)); err != nil {
				t.Fatalf("CallMaxAttempts(0) over WithMaxAttempts(1): %v", err)
			}
			wantSleeps(t, one, secs(1.5, 2.5))
		})
	}
}

// TestCallPerAttemptTimeoutCutsAndRetries: the first attempt hangs on the
// server until its context ends; CallPerAttemptTimeout(50ms) cuts it (on
// the wall clock), the cut is retried after the documented 1.5 s (virtual),
// and the second attempt answers.
func TestCallPerAttemptTimeoutCutsAndRetries(t *testing.T) {
	t.Parallel()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			var hangs atomic.Int32
			g.setSleep(func(ctx context.Context, _ time.Duration) error {
				if hangs.Add(1) == 1 {
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			})
			g.fake.SetLatency(k.readMethod, time.Hour)
			// The hung attempt takes the whole timeout; the one after it
			// must answer within it, also on a busy machine.
			if err := k.read(context.Background(), g, interceptor.CallPerAttemptTimeout(2*time.Second)); err != nil {
				t.Fatalf("read: %v", err)
			}
			wantSleeps(t, g, secs(1.5))
			as := g.Attempts()
			if len(as) != 1 || status.Code(as[0].Err) != codes.DeadlineExceeded || !as[0].Retrying {
				t.Fatalf("attempts %+v, want one cut attempt retried", as)
			}
		})
	}
}

// TestInvalidCallOptionsFailAtOnce: a negative value fails the call with
// INVALID_ARGUMENT naming the option, and nothing reaches the server.
func TestInvalidCallOptionsFailAtOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		opt  grpc.CallOption
		name string
	}{
		{interceptor.CallDeadline(-time.Second), "CallDeadline(-1s)"},
		{interceptor.CallMaxAttempts(-1), "CallMaxAttempts(-1)"},
		{interceptor.CallPerAttemptTimeout(-time.Millisecond), "CallPerAttemptTimeout(-1ms)"},
	}
	for _, k := range e2eKinds {
		for _, c := range cases {
			t.Run(k.name+"/"+c.name, func(t *testing.T) {
				g := newRig(t, withGRPC(), failedAttemptsOnly())
				err := k.read(context.Background(), g, c.opt)
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), c.name) {
					t.Fatalf("err %v, want INVALID_ARGUMENT naming %s", err, c.name)
				}
				if n := len(g.fake.Calls()); n != 0 {
					t.Fatalf("the server saw %d calls, want none", n)
				}
			})
		}
	}
}

// TestCallOptionsHarmlessWithoutTheInterceptor: on a connection without
// the interceptor gRPC ignores them, even invalid ones.
func TestCallOptionsHarmlessWithoutTheInterceptor(t *testing.T) {
	t.Parallel()
	g := newRig(t, withGRPC(), failedAttemptsOnly())
	conn, err := g.fake.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_, err = iampb.NewIAMPolicyClient(conn).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: g.sa.Name},
		interceptor.CallDeadline(-1), interceptor.CallMaxAttempts(-1), interceptor.CallPerAttemptTimeout(-1),
		interceptor.CallDeadline(time.Minute), interceptor.Disable(), interceptor.RetryNotFound())
	if err != nil {
		t.Fatalf("GetIamPolicy with the call options, no interceptor: %v", err)
	}
}
