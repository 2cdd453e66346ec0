package interceptor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

// Real clock, short waits: a cancelled context ends a sleep at once.
func TestWallClock(t *testing.T) {
	t.Parallel()
	c := interceptor.WallClock()
	start := c.Now()
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if c.Now().Sub(start) < time.Millisecond {
		t.Fatal("slept less than asked")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	begin := time.Now()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if time.Since(begin) > 5*time.Second {
		t.Fatal("a cancelled sleep did not end at once")
	}
	if err := c.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("a zero sleep on an ended context: %v", err)
	}
}
