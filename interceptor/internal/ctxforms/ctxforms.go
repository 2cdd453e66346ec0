// Package ctxforms holds the per-call options a context carries (the context
// forms of package interceptor: DisableContext, RetryNotFoundContext,
// DeadlineContext, MaxAttemptsContext), so that the engine, which reads
// them, and the Updaters, which must not batch callers whose forms differ,
// read one typed value.
package ctxforms

import (
	"context"
	"time"
)

// Flags are the boolean forms.
type Flags uint8

// The boolean forms.
const (
	Disable Flags = 1 << iota
	NotFound
)

// Forms are the per-call options of a context; the zero value is none.
// Forms values compare with ==.
type Forms struct {
	Flags          Flags
	Deadline       time.Duration
	MaxAttempts    int
	HasDeadline    bool
	HasMaxAttempts bool
}

type key struct{}

// Of returns the forms of ctx (the zero value when none).
func Of(ctx context.Context) Forms {
	f, _ := ctx.Value(key{}).(Forms)
	return f
}

// With returns ctx carrying f.
func With(ctx context.Context, f Forms) context.Context {
	return context.WithValue(ctx, key{}, f)
}
