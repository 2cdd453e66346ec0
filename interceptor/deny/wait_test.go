package deny_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestPollWaitNeverPassesTheContextDeadline: the wait for an operation is
// bounded by ctx ("give ctx a deadline"); on the Retrier's clock (a virtual
// one here, started at the wall clock's now, as the iamtest docs say), no
// wait between polls is started that would end past ctx's deadline, as the
// engine never starts one: the Update ends by the deadline with its code,
// instead of polling for the operation's whole 10 minutes.
func TestPollWaitNeverPassesTheContextDeadline(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil)
			e.seed(rule(0))
			e.srv.SetDenyOperationDelay(10 * time.Minute)
			const limit = 20 * time.Second
			ctx, cancel := context.WithDeadline(context.Background(), e.clock.Now().Add(limit))
			defer cancel()
			start := e.clock.Now()
			_, err := e.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if d := e.clock.Since(start); d > limit {
				t.Fatalf("the Update ran %v of the clock, past ctx's %v deadline (err %v)", d, limit, err)
			}
			if !isCode(err, grpccodes.DeadlineExceeded) || status.Code(err) != grpccodes.DeadlineExceeded {
				t.Fatalf("err %v, want DEADLINE_EXCEEDED", err)
			}
		})
	}
}

// cancelOnSleep is a Clock that cancels a context at the first wait it is
// asked for, then waits on the clock beneath.
type cancelOnSleep struct {
	interceptor.Clock
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnSleep) Sleep(ctx context.Context, d time.Duration) error {
	c.once.Do(c.cancel)
	return c.Clock.Sleep(ctx, d)
}

// TestCancelledDuringPollWait: the caller cancels while the Updater waits
// between two polls of its operation: the Update ends at once, nothing more
// is sent (no poll, no write), and the error has the context's code (as
// status.Code and codes.CodeOf read it, on both transports) and wraps
// context.Canceled.
func TestCancelledDuringPollWait(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := iamtest.NewVirtualClock(time.Now())
			e := newEnv(t, tr, []interceptor.Option{interceptor.WithClock(&cancelOnSleep{Clock: clock, cancel: cancel})})
			e.seed(rule(0))
			e.srv.SetDenyOperationDelay(time.Minute)
			_, err := e.u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if !errors.Is(err, context.Canceled) || status.Code(err) != grpccodes.Canceled || !isCode(err, grpccodes.Canceled) {
				t.Fatalf("err %v (status.Code %v), want CANCELED wrapping context.Canceled", err, status.Code(err))
			}
			if n := e.srv.CountCalls(iamtest.MethodGetOperation); n != 1 {
				t.Fatalf("%d polls, want 1 (the one before the wait)", n)
			}
			if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); n != 1 {
				t.Fatalf("%d writes, want 1", n)
			}
		})
	}
}
