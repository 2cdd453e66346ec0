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
// test and the fake gives them one timeline.
//
// The rule: time stands still while any thread of the test is awake; when
// every thread sleeps on the clock, it jumps to the earliest wake-up and
// wakes that sleeper alone. Sleepers thus wake in virtual-time order, each at
// its own deadline, never before it.
//
//   - Outside Go there is one thread, whichever goroutine calls Sleep: a
//     lone call's Sleep returns at once, with the clock moved by the wait.
//   - Go(ctx, n, f) runs n threads whose waits overlap in virtual time (n
//     concurrent calls); its caller waits until they all return.
//   - A thread may wait for a goroutine that sleeps in its place: the fake's
//     handler sleeping its latency, the policy Updater's committer sleeping
//     its backoff. A thread must not wait for another thread, nor for a
//     sleeper that serves another thread too: Updates that one Updater
//     coalesces into one read-modify-write share one sleeper, so run such
//     callers as goroutines of one thread (the go statement), where the
//     clock sees their one sleeper.
//
// Used so, the clock never deadlocks a test. A thread blocked on anything
// else stops time for all (the test hangs until its timeout). It does not end a sleep at its
// context's deadline, which is wall-clock time; NewVirtualClock(time.Now())
// makes code that compares a deadline with Now (the interceptor, which never
// starts a wait past the deadline) compare as a real run would.
//
// The alternative is testing/synctest with the wall clock (see the synctest
// example): no rule to follow, at the price of running the test in a bubble.
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

// Sleep waits d of virtual time, by the rule in the type's doc. It returns
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
