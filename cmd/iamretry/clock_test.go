package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSimClockRunsThreadsInVirtualTimeOrder: threads that sleep run one at
// a time, earliest wake-up first, ties to the lower thread; time jumps.
func TestSimClockRunsThreadsInVirtualTimeOrder(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newSimClock(start)
	var mu sync.Mutex
	var log []string
	wallStart := time.Now()
	c.Go(context.Background(), 3, func(ctx context.Context, i int) {
		for k := range 3 {
			if err := c.Sleep(ctx, time.Duration(4-i)*time.Second); err != nil {
				t.Error(err)
			}
			mu.Lock()
			log = append(log, fmt.Sprintf("%d@%v#%d", i, c.Now().Sub(start), k))
			mu.Unlock()
		}
	})
	want := []string{
		"3@1s#0", "2@2s#0", "3@2s#1", "1@3s#0", "3@3s#2", "2@4s#1", "1@6s#1", "2@6s#2", "1@9s#2",
	}
	if !slices.Equal(log, want) {
		t.Errorf("order\n got %v\nwant %v", log, want)
	}
	if got := c.Now().Sub(start); got != 9*time.Second {
		t.Errorf("clock at %v, want 9s", got)
	}
	if time.Since(wallStart) > 5*time.Second {
		t.Error("virtual waits took real time")
	}
	// The main thread sleeps alone again: at once.
	if err := c.Sleep(context.Background(), time.Minute); err != nil || c.Now().Sub(start) != 69*time.Second {
		t.Errorf("lone sleep: %v, clock at %v", err, c.Now().Sub(start))
	}
}

func TestSimClockCancel(t *testing.T) {
	c := newSimClock(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	c.Go(ctx, 2, func(ctx context.Context, i int) {
		if i == 1 {
			// thread 1 sleeps long; thread 2 cancels after a short sleep
			done <- c.Sleep(ctx, time.Hour)
			return
		}
		_ = c.Sleep(ctx, time.Second)
		go cancel()
		// let thread 1 return before this thread ends
		if err := <-done; err != context.Canceled {
			t.Errorf("long sleep returned %v, want context.Canceled", err)
		}
	})
	if err := c.Sleep(ctx, time.Second); err != context.Canceled {
		t.Errorf("sleep on a cancelled context: %v", err)
	}
}

func TestDemoFailsWhenAStepMisbehaves(t *testing.T) {
	saved := storySteps
	t.Cleanup(func() { storySteps = saved })
	storySteps = func() []demoStep {
		steps := demoSteps()[:1]
		return append(steps, demoStep{n: 9, title: "a step that fails", story: "sabotage",
			run: func(ctx context.Context, d *demo, s *stepState) error {
				s.outcome = "broken"
				s.expect(false, "this check fails")
				return nil
			}})
	}
	r := runCmd(t, "demo")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d", r.code, exitFailure)
	}
	for _, want := range []string{"✗ this check fails", "  9     sabotage", "FAIL\n", "FAIL: 1 of 2 steps"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}
