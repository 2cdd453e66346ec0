// Package vclock is a virtual clock for tests, the demo and simulations: time
// moves only when someone sleeps on it or advances it, so a retry schedule of
// minutes runs in microseconds and every wait can be checked exactly.
//
// Its Sleep returns at once after moving the clock forward by the whole wait,
// which makes a lone caller's timeline exact. Concurrent sleepers share one
// timeline: each sleep moves it forward from wherever it stands, so
// concurrent waits add up rather than overlap. That is conservative for
// deadlines (they come sooner, never later) and is what the tests rely on.
//
// A Clock starts at the wall-clock time of its creation (unless told
// otherwise) so that a context deadline, which is wall-clock time, can be
// compared with it: as long as the test itself runs in much less than its
// virtual waits, the comparison is the one a real run would make.
package vclock

import (
	"context"
	"sync"
	"time"
)

// Clock is a virtual clock, safe for concurrent use. It satisfies
// interceptor.Clock.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	sleeps  []time.Duration
	onSleep func(d time.Duration)
}

// New returns a Clock that reads the wall-clock time of this call.
func New() *Clock { return At(time.Now()) }

// At returns a Clock that reads t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep records d and moves the clock forward by d, at once. It returns
// ctx.Err() without moving the clock when ctx has already ended. A d <= 0
// returns at once and is not recorded.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	f := c.onSleep
	c.mu.Unlock()
	if f != nil {
		f(d)
	}
	return nil
}

// Advance moves the clock forward by d without recording a sleep.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Since returns the virtual time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Sleeps returns a copy of every recorded wait, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Reset forgets the recorded waits; the time stays where it is.
func (c *Clock) Reset() {
	c.mu.Lock()
	c.sleeps = nil
	c.mu.Unlock()
}

// OnSleep sets a function called after each recorded sleep, outside the
// clock's lock (a demo prints from it; a test can inject a fault from it).
func (c *Clock) OnSleep(f func(d time.Duration)) {
	c.mu.Lock()
	c.onSleep = f
	c.mu.Unlock()
}
