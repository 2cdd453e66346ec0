package interceptor_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// TestNewClientCallerContextWins: on every client NewClient builds, a
// caller's context deadline (30 s) shorter than the Retrier's (2 min) and
// than gax's timeout (60 s) ends the call: no wait is started that would
// end past it, and the call returns well before it.
func TestNewClientCallerContextWins(t *testing.T) {
	for _, c := range grpcCases() {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
			read, _, closeFn, err := c.build(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
			start := g.clock.Now()
			ctx, cancel := context.WithDeadline(context.Background(), start.Add(30*time.Second))
			defer cancel()
			err = read(ctx)
			if err == nil {
				t.Fatal("read succeeded during an outage")
			}
			// Waits 1.5, 2.5, 4.5, 8.5 (17 s); the next 16.5 s would end past 30 s.
			if n := g.fake.CountCalls(iamtest.AnyMethod); n != 5 {
				t.Fatalf("%d server calls, want 5 (within the caller's 30 s)", n)
			}
			if el := g.clock.Since(start); el > 30*time.Second {
				t.Fatalf("ended after %v, past the caller's 30 s", el)
			}
			if c := status.Code(err); c != codes.Unavailable && c != codes.DeadlineExceeded {
				t.Fatalf("err %v", err)
			}
		})
	}
}
