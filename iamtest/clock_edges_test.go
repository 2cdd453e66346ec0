package iamtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/iamtest"
)

// TestVirtualClockEdges: the VirtualClock's documented edges.
// Sleep with an ended context returns its error without moving the clock
// (also for d <= 0); d <= 0 returns nil at once; a lone caller's sleep
// moves the clock by exactly d, also for the longest Duration; Go with
// n <= 0 returns at once; and Advance never moves the clock back (a
// negative d used to: Now went backwards and Since turned negative).
func TestVirtualClockEdges(t *testing.T) {
	t.Parallel()
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

// Issue 20, item 7: a sleeper whose context is cancelled wakes with the
// context's error at the virtual time of the cancel, also when the thread
// that cancels goes on without waiting for it (returns, or sleeps again):
// the clock used to jump to the sleeper's full wake-up first (1 h here).
func TestVirtualClockCancelWakesAtTheCancel(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, then := range []string{"returns", "sleeps"} {
		t.Run("canceller "+then, func(t *testing.T) {
			c := iamtest.NewVirtualClock(start)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var err error
			var woke time.Duration
			c.Go(context.Background(), 2, func(tctx context.Context, i int) {
				if i == 0 {
					err = c.Sleep(ctx, time.Hour)
					woke = c.Since(start)
					return
				}
				if err := c.Sleep(tctx, time.Minute); err != nil {
					t.Error(err)
				}
				cancel()
				if then == "sleeps" {
					if err := c.Sleep(tctx, 2*time.Minute); err != nil {
						t.Error(err)
					}
				}
			})
			if !errors.Is(err, context.Canceled) || woke != time.Minute {
				t.Fatalf("cancelled sleeper woke with %v at %v, want context.Canceled at 1m0s", err, woke)
			}
			want := time.Minute
			if then == "sleeps" {
				want = 3 * time.Minute
			}
			if got := c.Since(start); got != want {
				t.Fatalf("clock at %v, want %v", got, want)
			}
			if s := c.Sleeps(); len(s) == 0 || s[len(s)-1] == time.Hour {
				t.Fatalf("Sleeps %v: the cancelled sleep was recorded as completed", s)
			}
		})
	}
}
