package main

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

// storyClock is the time of the demo: the interceptor's, the updater's and
// the fake's. Go runs n threads of the story at once (the racing writers).
type storyClock interface {
	interceptor.Clock
	// Go runs f(ctx, i) for i = 1..n, each on its own goroutine (a thread of
	// the story, told apart by threadOf(ctx)), and returns when all are done.
	Go(ctx context.Context, n int, f func(ctx context.Context, i int))
}

type threadKey struct{}

// threadOf returns the story thread a context belongs to: 0 for the main one.
func threadOf(ctx context.Context) int {
	i, _ := ctx.Value(threadKey{}).(int)
	return i
}

// wallClock is real time (demo --real-time): the interceptor's own clock,
// plus story threads.
type wallClock struct{ interceptor.Clock }

func (wallClock) Go(ctx context.Context, n int, f func(context.Context, int)) {
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() { f(context.WithValue(ctx, threadKey{}, i), i) })
	}
	wg.Wait()
}

// simClock is a discrete-event virtual clock: time stands still while any
// thread of the story runs, and when every thread sleeps it jumps to the
// earliest wake-up and wakes that sleeper alone. So threads that sleep run
// one at a time, in virtual-time order (ties: lower thread first), which
// makes a race of writers come out the same on every run, and every
// timestamp is what the wall clock would show on a real run with the same
// random draws. (internal/vclock, meant for a lone caller, adds concurrent
// waits up instead.)
//
// Every goroutine that sleeps on it must be a thread it knows: the caller of
// the demo (thread 0) or one started by Go. Contexts' wall-clock deadlines
// mean nothing to it; the demo gives none.
type simClock struct {
	mu       sync.Mutex
	now      time.Time
	running  int // threads awake
	sleepers sleeperHeap
	seq      uint64
}

func newSimClock(start time.Time) *simClock {
	return &simClock{now: start, running: 1}
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	c.mu.Lock()
	c.seq++
	s := &sleeper{wake: c.now.Add(d), thread: threadOf(ctx), seq: c.seq, woken: make(chan struct{})}
	heap.Push(&c.sleepers, s)
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
	select {
	case <-s.woken:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		if s.index >= 0 { // still asleep: leave the queue, awake again
			heap.Remove(&c.sleepers, s.index)
			c.running++
		}
		return ctx.Err()
	}
}

// advanceLocked wakes the earliest sleeper when no thread is awake.
func (c *simClock) advanceLocked() {
	if c.running > 0 || len(c.sleepers) == 0 {
		return
	}
	s := heap.Pop(&c.sleepers).(*sleeper)
	if s.wake.After(c.now) {
		c.now = s.wake
	}
	c.running++
	close(s.woken)
}

func (c *simClock) Go(ctx context.Context, n int, f func(context.Context, int)) {
	if n <= 0 {
		return
	}
	c.mu.Lock()
	c.running += n - 1 // the caller waits (not on the clock) while they run
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

type sleeper struct {
	wake   time.Time
	thread int
	seq    uint64
	woken  chan struct{}
	index  int // in the heap; -1 once popped
}

type sleeperHeap []*sleeper

func (h sleeperHeap) Len() int { return len(h) }
func (h sleeperHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.wake.Equal(b.wake) {
		return a.wake.Before(b.wake)
	}
	if a.thread != b.thread {
		return a.thread < b.thread
	}
	return a.seq < b.seq
}
func (h sleeperHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *sleeperHeap) Push(x any) {
	s := x.(*sleeper)
	s.index = len(*h)
	*h = append(*h, s)
}
func (h *sleeperHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}
