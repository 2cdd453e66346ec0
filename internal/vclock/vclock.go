// Package vclock is the one virtual clock of this module, for tests and the
// demo: a discrete-event clock on which a retry schedule of minutes runs in
// microseconds and every wait can be checked exactly.
//
// # The rule: time jumps when every thread sleeps
//
// The clock counts threads: goroutines that take part in the test. Time
// stands still while any thread is awake; when every thread is asleep on the
// clock (or has finished), the clock jumps to the earliest wake-up and wakes
// that sleeper alone. So sleepers wake in virtual-time order, each at its own
// deadline (ties: the lower thread number, then the earlier Sleep), and a
// sleeper never wakes before its time.
//
// Outside Go there is one thread: whatever goroutine calls Sleep. A lone
// caller's Sleep therefore returns at once with the clock moved by the wait,
// which is the common test: one call, its schedule, its elapsed time.
//
// Go(ctx, n, f) runs n threads at once; its caller's thread waits for them
// (it counts as asleep until they have all returned). Concurrent calls that
// must overlap in virtual time run as threads of Go.
//
// A thread may hand its work to another goroutine and wait for it (a gRPC
// handler that sleeps the fake's latency): that goroutine sleeps in the
// thread's place. What a thread must not do while other threads run is wait
// for something that no sleeper will bring about: a channel fed by another
// thread, a lock held by a sleeper, or a sleeper that serves another thread
// too (threads whose Updates one Updater coalesces into one batch would wait
// for the sleeps of the caller that leads it, another thread). Such callers
// run as goroutines of one thread (the go statement): the clock sees their
// one sleeper; which batch each joins depends on when its goroutine starts,
// as in real time. Used so, the clock
// never deadlocks a test: a thread that is awake by the count is running, or
// waits for a goroutine that will sleep or finish. The rule cannot be
// checked: a thread blocked on anything else, with no goroutine sleeping in
// its place, stops time for every thread (the test hangs until its timeout).
//
// Contexts' deadlines are wall-clock time and the clock does not end a sleep
// at them; a sleep ends early only when its context is cancelled or its
// wall-clock deadline passes in real time. A Clock made by New starts at the
// wall-clock time of its creation, so that code comparing a context's
// deadline with Now (the interceptor does, to never sleep past it) makes the
// comparison a real run would make, as long as the test runs in much less
// real time than its virtual waits.
//
// # Why internal/herd keeps its own event queue
//
// The thundering-herd simulator schedules millions of events for thousands
// of simulated clients, with no goroutines: each event is a value in a heap
// and the simulation loop pops them. This clock wakes real goroutines that
// run real code (clients, interceptors, the fake server) and must count who
// is awake; routing the simulator through it would cost a goroutine and a
// channel per client and a lock per event for nothing, and its queue of
// (time, sequence) values would gain nothing from sharing code with a heap
// of blocked goroutines.
package vclock

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock is a discrete-event virtual clock, safe for concurrent use. It
// satisfies interceptor.Clock and iamtest.Clock.
type Clock struct {
	mu       sync.Mutex
	now      time.Time
	running  int // threads awake
	sleepers sleeperHeap
	endable  int // sleepers whose context can end
	seq      uint64
	sleeps   []time.Duration
	onSleep  func(d time.Duration)
}

// New returns a Clock that reads the wall-clock time of this call.
func New() *Clock { return At(time.Now()) }

// At returns a Clock that reads t.
func At(t time.Time) *Clock { return &Clock{now: t, running: 1} }

// Now returns the virtual time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Since returns the virtual time elapsed since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Sleep waits d of virtual time: it returns once every thread sleeps and no
// other sleeper is due earlier, with the clock at the wake-up time (see the
// package doc). It returns ctx.Err() at once, without moving the clock, when
// ctx has already ended, and ctx.Err() as soon as ctx ends during the wait,
// at the virtual time it ended (then the sleep is forgotten): the clock
// never jumps past a sleeper whose context has ended, also when the thread
// that cancelled it goes on to sleep or return. A d <= 0 returns at once and is not
// recorded. A completed sleep is recorded (Sleeps) and reported to the
// OnSleep function, in the order of the wake-ups.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	c.mu.Lock()
	c.seq++
	s := &sleeper{wake: c.now.Add(d), d: d, thread: Thread(ctx), seq: c.seq, woken: make(chan struct{})}
	if ctx.Done() != nil {
		s.ctx = ctx
		c.endable++
	}
	heap.Push(&c.sleepers, s)
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
	select {
	case <-s.woken:
	case <-ctx.Done():
		c.mu.Lock()
		if s.index >= 0 { // still asleep: leave the queue, awake again
			c.removeLocked(s)
			c.running++
			c.mu.Unlock()
			return ctx.Err()
		}
		c.mu.Unlock() // woken meanwhile
	}
	c.mu.Lock()
	ended := s.ended
	c.mu.Unlock()
	if ended { // woken because ctx ended: not a completed sleep
		return ctx.Err()
	}
	c.mu.Lock()
	f := c.onSleep
	c.mu.Unlock()
	if f != nil {
		f(d)
	}
	return nil
}

// advanceLocked wakes the earliest sleeper when no thread is awake. A
// sleeper whose context has ended is woken first, at the current time, and
// then time stands still while it runs: its goroutine may not have seen the
// end yet (ctx.Err is set when cancel returns; Done is read later), and the
// clock must not jump to its wake-up meanwhile.
func (c *Clock) advanceLocked() {
	if c.running > 0 || len(c.sleepers) == 0 {
		return
	}
	if c.endable > 0 {
		var ended []*sleeper
		for _, s := range c.sleepers {
			if s.ctx != nil && s.ctx.Err() != nil {
				ended = append(ended, s)
			}
		}
		for _, s := range ended {
			c.removeLocked(s)
			s.ended = true
			c.running++
			close(s.woken)
		}
		if len(ended) > 0 {
			return
		}
	}
	s := heap.Pop(&c.sleepers).(*sleeper)
	if s.ctx != nil {
		c.endable--
	}
	if s.wake.After(c.now) {
		c.now = s.wake
	}
	c.sleeps = append(c.sleeps, s.d)
	c.running++
	close(s.woken)
}

// removeLocked takes s, still asleep, out of the queue.
func (c *Clock) removeLocked(s *sleeper) {
	heap.Remove(&c.sleepers, s.index)
	s.index = -1
	if s.ctx != nil {
		c.endable--
	}
}

// Go runs f(ctx, i) for i = 1..n, each on its own goroutine and as a thread
// of the clock (Thread(ctx) == i), and returns when all have returned. Its
// caller must be a thread itself (any goroutine outside Go, or a thread of
// an enclosing Go); it waits, not counting as awake, while they run. A
// thread that ends (returns, panics, runtime.Goexit) stops counting.
func (c *Clock) Go(ctx context.Context, n int, f func(ctx context.Context, i int)) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	c.running += n - 1 // the caller's place goes to the n threads
	c.mu.Unlock()
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			defer func() {
				c.mu.Lock()
				c.running--
				c.advanceLocked()
				c.mu.Unlock()
			}()
			f(context.WithValue(ctx, threadKey{}, i), i)
		})
	}
	wg.Wait()
	c.mu.Lock()
	c.running++
	c.mu.Unlock()
}

type threadKey struct{}

// Thread returns the number of the thread of Go that ctx belongs to (the
// innermost one), or 0 outside Go.
func Thread(ctx context.Context) int {
	i, _ := ctx.Value(threadKey{}).(int)
	return i
}

// Advance moves the clock forward by d without recording a sleep. Sleepers
// whose time it passes wake, in order, when every thread next sleeps. A
// negative d panics: the clock never goes back (a sleeper would wake after
// its time, and code that measures elapsed time would see it negative).
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("vclock: Advance(%v): the clock only moves forward; d must be >= 0", d))
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Sleeps returns a copy of every completed wait, in the order of the
// wake-ups.
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

// OnSleep sets a function that each completed sleep calls with its wait,
// in the sleeper's goroutine, outside the clock's lock, before Sleep returns
// (a demo prints from it; a test can inject a fault from it).
func (c *Clock) OnSleep(f func(d time.Duration)) {
	c.mu.Lock()
	c.onSleep = f
	c.mu.Unlock()
}
