package vclock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// A lone caller's sleeps return at once, each moving the clock by its wait.
func TestLoneSleeper(t *testing.T) {
	c := At(t0)
	var seen []time.Duration
	c.OnSleep(func(d time.Duration) { seen = append(seen, d) })
	for _, d := range []time.Duration{time.Second, 0, -time.Second, time.Hour, 2 * time.Second} {
		if err := c.Sleep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Since(t0); got != time.Hour+3*time.Second {
		t.Fatalf("elapsed %v, want 1h0m3s", got)
	}
	want := []time.Duration{time.Second, time.Hour, 2 * time.Second}
	if got := c.Sleeps(); !slices.Equal(got, want) {
		t.Fatalf("sleeps %v, want %v", got, want)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("OnSleep saw %v, want %v", seen, want)
	}
	c.Advance(time.Minute)
	c.Reset()
	if len(c.Sleeps()) != 0 || c.Since(t0) != time.Hour+time.Minute+3*time.Second {
		t.Fatal("Advance/Reset")
	}
}

func TestSleepEndedContext(t *testing.T) {
	c := New()
	start := c.Now()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if c.Now() != start || len(c.Sleeps()) != 0 {
		t.Fatal("clock moved on an ended context")
	}
}

// N concurrent sleepers with different waits wake in order, each at its own
// deadline: the clock ends at the longest wait, not at their sum.
func TestConcurrentSleepersWakeInOrderAtTheirOwnTimes(t *testing.T) {
	const n = 20
	c := At(t0)
	var log []string // appended by one thread at a time: the only one awake
	c.Go(context.Background(), n, func(ctx context.Context, i int) {
		d := time.Duration((i*7)%n+1) * time.Second // 1s..20s, shuffled over the threads
		if err := c.Sleep(ctx, d); err != nil {
			t.Error(err)
		}
		log = append(log, fmt.Sprintf("%v@%v", d, c.Since(t0)))
	})
	var want []string
	for k := 1; k <= n; k++ {
		d := time.Duration(k) * time.Second
		want = append(want, fmt.Sprintf("%v@%v", d, d))
	}
	if !slices.Equal(log, want) {
		t.Fatalf("wake-ups\n got %v\nwant %v", log, want)
	}
	if got := c.Since(t0); got != n*time.Second {
		t.Fatalf("clock at %v, want %v", got, n*time.Second)
	}
	sleeps := c.Sleeps()
	if !slices.IsSorted(sleeps) || len(sleeps) != n {
		t.Fatalf("Sleeps %v: want %d, in wake-up order", sleeps, n)
	}
}

// Threads that sleep repeatedly run one at a time, earliest wake-up first,
// ties to the lower thread; afterwards the caller sleeps alone again.
func TestThreadsInterleaveInVirtualTimeOrder(t *testing.T) {
	c := At(t0)
	var log []string
	c.Go(context.Background(), 3, func(ctx context.Context, i int) {
		if Thread(ctx) != i {
			t.Errorf("Thread(ctx) = %d, want %d", Thread(ctx), i)
		}
		for k := range 3 {
			if err := c.Sleep(ctx, time.Duration(4-i)*time.Second); err != nil {
				t.Error(err)
			}
			log = append(log, fmt.Sprintf("%d@%v#%d", i, c.Since(t0), k))
		}
	})
	want := []string{
		"3@1s#0", "2@2s#0", "3@2s#1", "1@3s#0", "3@3s#2", "2@4s#1", "1@6s#1", "2@6s#2", "1@9s#2",
	}
	if !slices.Equal(log, want) {
		t.Errorf("order\n got %v\nwant %v", log, want)
	}
	if err := c.Sleep(context.Background(), time.Minute); err != nil || c.Since(t0) != 69*time.Second {
		t.Errorf("lone sleep: %v, clock at %v", err, c.Since(t0))
	}
	if Thread(context.Background()) != 0 {
		t.Error("Thread outside Go")
	}
}

// A sleep cancelled during its wait returns the context's error at once and
// leaves the queue; the clock never reaches its wake-up.
func TestCancelDuringWait(t *testing.T) {
	c := At(t0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	long := make(chan error, 1)
	c.Go(context.Background(), 2, func(tctx context.Context, i int) {
		if i == 1 {
			long <- c.Sleep(ctx, time.Hour)
			return
		}
		if err := c.Sleep(tctx, time.Second); err != nil {
			t.Error(err)
		}
		cancel() // thread 1 still sleeps: it is due in 59m59s
		if err := <-long; !errors.Is(err, context.Canceled) {
			t.Errorf("long sleep returned %v, want context.Canceled", err)
		}
	})
	if got := c.Since(t0); got != time.Second {
		t.Fatalf("clock at %v, want 1s: a cancelled sleep must not move it", got)
	}
	if got := c.Sleeps(); !slices.Equal(got, []time.Duration{time.Second}) {
		t.Fatalf("Sleeps %v", got)
	}
}

// A thread may hand its work to a goroutine that sleeps in its place (a
// server handler) and wait for it.
func TestHelperSleepsInTheThreadsPlace(t *testing.T) {
	c := At(t0)
	var log []string
	var mu sync.Mutex
	c.Go(context.Background(), 2, func(ctx context.Context, i int) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = c.Sleep(ctx, time.Duration(3-i)*time.Second)
			mu.Lock()
			log = append(log, fmt.Sprintf("helper %d@%v", i, c.Since(t0)))
			mu.Unlock()
		}()
		<-done
	})
	want := []string{"helper 2@1s", "helper 1@2s"}
	if !slices.Equal(log, want) {
		t.Fatalf("got %v, want %v", log, want)
	}
}

// A thread that ends without sleeping lets the others' time move; nested Go
// hands the outer thread's place to its own threads.
func TestEndingAndNestedThreads(t *testing.T) {
	c := At(t0)
	var got [3]time.Duration
	c.Go(context.Background(), 2, func(ctx context.Context, i int) {
		if i == 1 {
			return
		}
		c.Go(ctx, 2, func(ctx context.Context, j int) {
			_ = c.Sleep(ctx, time.Duration(j)*time.Minute)
			got[j] = c.Since(t0)
		})
		_ = c.Sleep(ctx, time.Second)
		got[0] = c.Since(t0)
	})
	if want := [3]time.Duration{2*time.Minute + time.Second, time.Minute, 2 * time.Minute}; got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Goroutines outside Go that sleep at once share the one thread: each sleep
// is whole and none deadlocks.
func TestUnregisteredGoroutinesNeverDeadlock(t *testing.T) {
	c := At(t0)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { _ = c.Sleep(context.Background(), time.Millisecond); _ = c.Now() })
	}
	wg.Wait()
	if got := c.Since(t0); got != 50*time.Millisecond || len(c.Sleeps()) != 50 {
		t.Fatalf("elapsed %v, %d sleeps", got, len(c.Sleeps()))
	}
}
