package interceptor

import (
	"context"
	"time"
)

// Clock is a Retrier's time source (WithClock); tests inject a virtual one.
// Sleep returns nil after the whole wait, or ctx.Err() once ctx ends.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// WallClock returns the real clock, WithClock's default.
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
