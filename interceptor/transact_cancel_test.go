package interceptor_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// TestTransactCancelledDuringACall: the caller cancels while the read or
// the write is on its way (the call then fails as gRPC fails it, CANCELED):
// Transact returns at once, with no wait, no rerun and, after a cancelled
// read, no write; the last attempt's reason is ContextDone. A context that
// has ended before Transact writes nothing either.
func TestTransactCancelledDuringACall(t *testing.T) {
	for _, at := range []string{"before", "read", "write"} {
		t.Run(at, func(t *testing.T) {
			h := newHarness(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := &etagStore{}
			tx := s.add("a")
			read, write := tx.Read, tx.Write
			canceled := status.Error(grpccodes.Canceled, "context canceled")
			tx.Read = func(ctx context.Context) (*toyDoc, error) {
				if at == "read" {
					cancel()
				}
				if ctx.Err() != nil {
					s.record("read:Canceled")
					return nil, canceled
				}
				return read(ctx)
			}
			tx.Write = func(ctx context.Context, d *toyDoc) (*toyDoc, error) {
				if at == "write" {
					cancel()
				}
				if ctx.Err() != nil {
					s.record("write:Canceled")
					return nil, canceled
				}
				return write(ctx, d)
			}
			if at == "before" {
				cancel()
			}
			_, err := interceptor.Transact(ctx, h.r, tx)
			if status.Code(err) != grpccodes.Canceled {
				t.Fatalf("err %v, want CANCELED", err)
			}
			want := []string{"read:Canceled"}
			if at == "write" {
				want = []string{"read", "write:Canceled"}
			}
			if !slices.Equal(s.calls(), want) {
				t.Fatalf("calls %v, want %v", s.calls(), want)
			}
			if w := h.clock.Sleeps(); len(w) != 0 {
				t.Fatalf("waits %v after a cancel, want none", w)
			}
			if last := h.attempts[len(h.attempts)-1]; last.Reason != interceptor.ContextDone || last.Retrying {
				t.Fatalf("last attempt %+v, want ContextDone", last)
			}
		})
	}
}

// TestTransactContextDeadlineNeverOverslept: under endless conflicts
// (either schedule) or transient failures, with a retry deadline longer
// than ctx's, no wait ends past ctx's deadline (on the Retrier's clock,
// started at the wall clock's now so that ctx's deadline compares as in a
// real run), and the Transact ends there.
func TestTransactContextDeadlineNeverOverslept(t *testing.T) {
	for _, name := range []string{"spread conflicts", "documented conflicts", "transient"} {
		t.Run(name, func(t *testing.T) {
			clock := vclock.At(time.Now())
			h := newHarness(t, interceptor.WithClock(clock), interceptor.WithDeadline(time.Hour))
			const limit = 15 * time.Second
			ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(limit))
			defer cancel()
			s := &etagStore{}
			tx := s.add("a")
			switch name {
			case "transient":
				s.readHook = func(context.Context) error { return errDown }
			case "documented conflicts":
				tx.Conflicts = interceptor.DocumentedConflicts
				fallthrough
			default:
				s.steal = 1 << 20
			}
			start := clock.Now()
			_, err := interceptor.Transact(ctx, h.r, tx)
			if err == nil {
				t.Fatal("succeeded")
			}
			if d := clock.Since(start); d >= limit {
				t.Fatalf("ended after %v, at or past ctx's %v deadline", d, limit)
			}
			if last := h.attempts[len(h.attempts)-1]; last.Reason != interceptor.ContextDeadline {
				t.Fatalf("last attempt %+v, want ContextDeadline", last)
			}
		})
	}
}

// TestTransactPerAttemptTimeoutOnEveryCall: each Read (the fresh read that
// judges a FAILED_PRECONDITION among them) and each Write runs under the
// per-attempt timeout.
func TestTransactPerAttemptTimeoutOnEveryCall(t *testing.T) {
	const d = time.Minute
	h := newHarness(t, interceptor.WithPerAttemptTimeout(d))
	s := &etagStore{steal: 1, staleCode: grpccodes.FailedPrecondition}
	tx := s.add("a")
	var missing []string
	check := func(what string, ctx context.Context) {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > d {
			missing = append(missing, what)
		}
	}
	read, write := tx.Read, tx.Write
	tx.Read = func(ctx context.Context) (*toyDoc, error) { check("read", ctx); return read(ctx) }
	tx.Write = func(ctx context.Context, v *toyDoc) (*toyDoc, error) { check("write", ctx); return write(ctx, v) }
	if _, err := interceptor.Transact(context.Background(), h.r, tx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"read", "write:FailedPrecondition", "read", "read", "write"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
	if len(missing) > 0 {
		t.Fatalf("calls without the per-attempt deadline: %v", missing)
	}
}

// TestTransactModifyErrorIsNeverAConflict: Modify's error ends the
// transaction unchanged even when it carries ABORTED or a transient code,
// and after conflicts the result is what the last attempt wrote.
func TestTransactModifyErrorIsNeverAConflict(t *testing.T) {
	for _, code := range []grpccodes.Code{grpccodes.Aborted, grpccodes.Unavailable, grpccodes.FailedPrecondition} {
		h := newHarness(t)
		s := &etagStore{}
		tx := s.add("a")
		mine := status.Error(code, "mine")
		tx.Modify = func(*toyDoc) (*toyDoc, bool, error) { return nil, false, mine }
		if _, err := interceptor.Transact(context.Background(), h.r, tx); !errors.Is(err, mine) || err != mine {
			t.Fatalf("%v: err %v, want Modify's own", code, err)
		}
		if len(s.calls()) != 1 || len(h.clock.Sleeps()) != 0 {
			t.Fatalf("%v: calls %v, waits %v", code, s.calls(), h.clock.Sleeps())
		}
	}
}
