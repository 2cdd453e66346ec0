package main

import (
	"context"
	"sync"
	"time"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// storyClock is the time of the demo: the interceptor's, the updater's and
// the fake's. Go runs n threads of the story at once (the racing writers).
type storyClock interface {
	interceptor.Clock
	// Go runs f(ctx, i) for i = 0..n-1, each on its own goroutine (a thread of
	// the story), and returns when all are done.
	Go(ctx context.Context, n int, f func(ctx context.Context, i int))
}

// newSimClock is the demo's virtual time: iamtest's discrete-event clock,
// on which threads that sleep run one at a time in virtual-time order (ties:
// the lower thread first), so a race of writers comes out the same on every
// run, and every timestamp is what the wall clock would show on a real run
// with the same random draws.
func newSimClock(start time.Time) storyClock { return iamtest.NewVirtualClock(start) }

// wallClock is real time (demo --real-time): the interceptor's own clock,
// plus story threads.
type wallClock struct{ interceptor.Clock }

func (wallClock) Go(ctx context.Context, n int, f func(context.Context, int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(ctx, i) })
	}
	wg.Wait()
}
