package iamtest

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/iamretry/iamretry/internal/vclock"
)

// VirtualClock is a discrete-event virtual clock for what testing/synctest
// cannot serve (a virtual-time demo, a simulator): retry backoff and the
// fake's latency run on it in no real time, and every wait can be checked
// exactly. Tests of your own code run under testing/synctest first (see the
// package doc's "Time"). It satisfies Clock (for WithClock) and the
// retrying code's clock (interceptor.WithClock). Only the goroutine that
// made it and the goroutines its Go starts may Sleep on it or call Go; any
// other goroutine's call panics, naming the rule.
type VirtualClock struct {
	c       *vclock.Clock
	mu      sync.Mutex
	threads map[uint64]int // goroutine id -> how many Go threads (or the maker) it is
}

// NewVirtualClock returns a VirtualClock that reads start. The calling
// goroutine is its one thread outside Go.
func NewVirtualClock(start time.Time) *VirtualClock {
	return &VirtualClock{c: vclock.At(start), threads: map[uint64]int{goroutineID(): 1}}
}

// Now returns the virtual time.
func (c *VirtualClock) Now() time.Time { return c.c.Now() }

// Since returns the virtual time elapsed since t.
func (c *VirtualClock) Since(t time.Time) time.Duration { return c.c.Since(t) }

// Sleep waits d of virtual time, by the rule in the package doc's "Time". It returns
// ctx.Err() at once, without moving the clock, when ctx has already ended,
// and as soon as ctx ends during the wait, at the virtual time it ended (the
// clock never jumps past a sleeper whose context has ended); such a sleep is
// not recorded in Sleeps. A d <= 0 returns nil at once. A call from a
// goroutine that is no thread of the clock panics (the fake's own latency
// waits are exempt: its handlers sleep in their caller's place).
func (c *VirtualClock) Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Value(threadOf{}) != c {
		c.mustBeThread("Sleep")
	}
	return c.c.Sleep(ctx, d)
}

// Go runs f(ctx, i) for i = 0..n-1, each on its own goroutine and as a
// thread of the clock, and returns when all have returned. Its caller must
// be a thread itself (the goroutine that made the clock, or a thread of an
// enclosing Go). Sleepers due at one instant wake in the order of their
// threads' i. A goroutine that a thread starts is no thread: its Sleep panics.
func (c *VirtualClock) Go(ctx context.Context, n int, f func(ctx context.Context, i int)) {
	c.mustBeThread("Go")
	c.c.Go(ctx, n, func(ctx context.Context, i int) {
		id := goroutineID()
		c.mu.Lock()
		c.threads[id]++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			if c.threads[id]--; c.threads[id] == 0 {
				delete(c.threads, id)
			}
			c.mu.Unlock()
		}()
		f(context.WithValue(ctx, threadOf{}, c), i-1)
	})
}

// threadOf is the context key of the VirtualClock whose Go started the
// context's thread: a goroutine the thread hands its work to with its
// context (the policy Updater's batch) sleeps in the thread's place.
type threadOf struct{}

// mustBeThread panics unless the calling goroutine is a thread of c.
func (c *VirtualClock) mustBeThread(op string) {
	id := goroutineID()
	c.mu.Lock()
	ok := c.threads[id] > 0
	c.mu.Unlock()
	if !ok {
		panic(fmt.Sprintf("iamtest: VirtualClock.%s from goroutine %d, which is no thread of the clock: "+
			"only the goroutine that called NewVirtualClock and the goroutines VirtualClock.Go starts may sleep on it "+
			"(time jumps when every thread sleeps, so a goroutine it does not count makes waits wrong); "+
			"run concurrent callers as threads of Go, or run the test under testing/synctest", op, id))
	}
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

// goroutineID returns the id of the calling goroutine, from the first line
// of its stack trace ("goroutine N [running]:"), the one exported way to
// read it.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("iamtest: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
	}
	return id
}
