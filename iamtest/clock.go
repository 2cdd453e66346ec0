package iamtest

import (
	"context"
	"fmt"
	"time"

	"github.com/iamretry/iamretry/internal/vclock"
)

// VirtualClock is a discrete-event virtual clock for tests: retry backoff
// and the fake's latency run on it in no real time, and every wait can be
// checked exactly. It satisfies Clock (for WithClock) and the retrying
// code's clock (interceptor.WithClock, also handed to policy.NewUpdater),
// and is safe for concurrent use. One VirtualClock shared by the code under
// test and the fake gives them one timeline. Time moves only when every
// thread of the test sleeps on it: follow the rule in the package doc's
// "Time" so that it never deadlocks a test.
type VirtualClock struct {
	c *vclock.Clock
}

// NewVirtualClock returns a VirtualClock that reads start.
func NewVirtualClock(start time.Time) *VirtualClock {
	return &VirtualClock{c: vclock.At(start)}
}

// Now returns the virtual time.
func (c *VirtualClock) Now() time.Time { return c.c.Now() }

// Since returns the virtual time elapsed since t.
func (c *VirtualClock) Since(t time.Time) time.Duration { return c.c.Since(t) }

// Sleep waits d of virtual time, by the rule in the package doc's "Time". It returns
// ctx.Err() at once, without moving the clock, when ctx has already ended,
// and as soon as ctx ends during the wait, at the virtual time it ended (the
// clock never jumps past a sleeper whose context has ended, also when the
// thread that cancelled it sleeps on or returns); such a sleep is not
// recorded in Sleeps. A d <= 0 returns nil at once.
func (c *VirtualClock) Sleep(ctx context.Context, d time.Duration) error { return c.c.Sleep(ctx, d) }

// Go runs f(ctx, i) for i = 1..n, each on its own goroutine and as a thread
// of the clock, and returns when all have returned. Its caller must be a
// thread itself (a goroutine outside Go, or a thread of an enclosing Go).
// Sleepers due at one instant wake in the order of their threads' i.
func (c *VirtualClock) Go(ctx context.Context, n int, f func(ctx context.Context, i int)) {
	c.c.Go(ctx, n, f)
}

// Advance moves the clock forward by d without a sleep; sleepers whose time
// it passes wake, in order, when every thread next sleeps. A negative d
// panics with a message naming it: the clock never goes back.
func (c *VirtualClock) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("iamtest: VirtualClock.Advance(%v): the clock only moves forward; d must be >= 0", d))
	}
	c.c.Advance(d)
}

// Sleeps returns every completed wait so far, in the order of the wake-ups.
func (c *VirtualClock) Sleeps() []time.Duration { return c.c.Sleeps() }
