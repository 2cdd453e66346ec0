package vclock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestSleepAdvancesAndRecords(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := At(t0)
	var seen []time.Duration
	c.OnSleep(func(d time.Duration) { seen = append(seen, d) })
	for _, d := range []time.Duration{time.Second, 0, -time.Second, 2 * time.Second} {
		if err := c.Sleep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Since(t0); got != 3*time.Second {
		t.Fatalf("elapsed %v, want 3s", got)
	}
	if got := c.Sleeps(); len(got) != 2 || got[0] != time.Second || got[1] != 2*time.Second {
		t.Fatalf("sleeps %v", got)
	}
	if len(seen) != 2 {
		t.Fatalf("OnSleep saw %v", seen)
	}
	c.Advance(time.Minute)
	c.Reset()
	if len(c.Sleeps()) != 0 || c.Since(t0) != time.Minute+3*time.Second {
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
	if c.Now() != start {
		t.Fatal("clock moved on an ended context")
	}
}

func TestConcurrent(t *testing.T) {
	c := New()
	start := c.Now()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { _ = c.Sleep(context.Background(), time.Millisecond); _ = c.Now() })
	}
	wg.Wait()
	if got := c.Since(start); got != 50*time.Millisecond {
		t.Fatalf("elapsed %v", got)
	}
}
