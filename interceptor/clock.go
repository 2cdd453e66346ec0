package interceptor

import (
	"context"
	"time"
)

// Clock is the time source of a Retrier: it tells the time for deadlines and
// sleeps between attempts. Tests inject a virtual one (WithClock) so that a
// schedule of minutes runs at once and every wait can be checked exactly.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d. It returns ctx.Err() as soon as ctx ends first, and
	// nil after the whole wait.
	Sleep(ctx context.Context, d time.Duration) error
}

// WallClock returns the real clock, the default of WithClock: Now is
// time.Now and Sleep waits on a timer, ending early when ctx ends. Wrap it
// to observe or scale waits.
func WallClock() Clock { return wallClock{} }

// wallClock is the real clock, the default.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
