package iamtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/iamtest"
)

// TestAdversarialVirtualClockEdges: the VirtualClock's documented edges.
// Sleep with an ended context returns its error without moving the clock
// (also for d <= 0); d <= 0 returns nil at once; a lone caller's sleep
// moves the clock by exactly d, also for the longest Duration; Go with
// n <= 0 returns at once; and Advance never moves the clock back (a
// negative d used to: Now went backwards and Since turned negative).
func TestAdversarialVirtualClockEdges(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := iamtest.NewVirtualClock(start)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{-time.Second, 0, time.Second} {
		if err := c.Sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(cancelled, %v) = %v, want context.Canceled", d, err)
		}
	}
	for _, d := range []time.Duration{time.Duration(-1 << 63), -1, 0} {
		if err := c.Sleep(context.Background(), d); err != nil {
			t.Errorf("Sleep(%v) = %v", d, err)
		}
	}
	if !c.Now().Equal(start) || len(c.Sleeps()) != 0 {
		t.Fatalf("the clock moved to %v (sleeps %v) without a wait", c.Now(), c.Sleeps())
	}
	long := time.Duration(1<<63 - 1)
	if err := c.Sleep(context.Background(), long); err != nil || c.Since(start) != long {
		t.Fatalf("Sleep(%v): %v, clock moved %v", long, err, c.Since(start))
	}
	ran := false
	c.Go(context.Background(), 0, func(context.Context, int) { ran = true })
	c.Go(context.Background(), -3, func(context.Context, int) { ran = true })
	if ran {
		t.Fatal("Go with n <= 0 ran f")
	}
	before := c.Now()
	func() {
		defer func() {
			r := recover()
			if s, ok := r.(string); !ok || !strings.Contains(s, "Advance(-1s)") {
				t.Errorf("Advance(-1s) recovered %v, want a panic naming it", r)
			}
		}()
		c.Advance(-time.Second)
	}()
	if !c.Now().Equal(before) {
		t.Fatalf("Advance(-1s) moved the clock from %v to %v", before, c.Now())
	}
	c.Advance(0)
	c.Advance(time.Minute)
	if c.Now().Sub(before) != time.Minute {
		t.Fatalf("Advance(1m) moved %v", c.Now().Sub(before))
	}
}
