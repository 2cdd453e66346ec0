package interceptor_test

// The context forms on Transact (the promise: honoured on every face; on a
// read-modify-write, DisableContext and MaxAttemptsContext never stop the
// reruns after a conflict) and the exactness of their caps on Do.

import (
	"context"
	"slices"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// TestTransactContextFormsKeepConflictReruns: under DisableContext or
// MaxAttemptsContext(1), three conflicts in a row are still rerun and the
// change is written; a Transient failure is not retried.
func TestTransactContextFormsKeepConflictReruns(t *testing.T) {
	for _, c := range []struct {
		name string
		ctx  func(context.Context) context.Context
	}{
		{"DisableContext", interceptor.DisableContext},
		{"MaxAttemptsContext(1)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			s := &etagStore{steal: 3}
			got, err := interceptor.Transact(c.ctx(context.Background()), h.r, s.add("a"))
			if err != nil {
				t.Fatalf("3 conflicts under %s: %v", c.name, err)
			}
			if !slices.Contains(got.Items, "a") || s.count("a") != 1 {
				t.Fatalf("items %v", got.Items)
			}
			h2 := newHarness(t)
			s2 := &etagStore{readFaults: []error{errDown}}
			if _, err := interceptor.Transact(c.ctx(context.Background()), h2.r, s2.add("a")); status.Code(err) != grpccodes.Unavailable {
				t.Fatalf("a Transient read under %s: %v, want UNAVAILABLE at once", c.name, err)
			}
			if want := []string{"read:Unavailable"}; !slices.Equal(s2.calls(), want) {
				t.Fatalf("calls %v, want %v", s2.calls(), want)
			}
		})
	}
}

// TestTransactMaxAttemptsContextExact: MaxAttemptsContext(n) allows
// exactly n Transient attempts, conflicts among them not counted.
func TestTransactMaxAttemptsContextExact(t *testing.T) {
	for n := 2; n <= 4; n++ {
		h := newHarness(t)
		s := &etagStore{readFaults: slices.Repeat([]error{errDown}, 10), steal: 0}
		_, err := interceptor.Transact(interceptor.MaxAttemptsContext(context.Background(), n), h.r, s.add("a"))
		if status.Code(err) != grpccodes.Unavailable || len(s.calls()) != n {
			t.Fatalf("MaxAttemptsContext(%d): err %v, calls %v", n, err, s.calls())
		}
	}
}

// TestTransactDeadlineContext: DeadlineContext replaces the Retrier's
// deadline on Transact: 10 s allows the waits 1.5, 2.5, 4.5 (8.5 s) and
// not the next 8.5.
func TestTransactDeadlineContext(t *testing.T) {
	h := newHarness(t)
	s := &etagStore{readFaults: slices.Repeat([]error{errDown}, 20)}
	_, err := interceptor.Transact(interceptor.DeadlineContext(context.Background(), 10*time.Second), h.r, s.add("a"))
	if status.Code(err) != grpccodes.Unavailable {
		t.Fatal(err)
	}
	if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 4.5); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

// TestDoContextFormsExact: on Do, MaxAttemptsContext(n) is exactly n
// attempts for every n up to the Retrier's own cap and past it, 0 is no
// cap (the deadline rules), and DeadlineContext(0) leaves the context's
// deadline to rule.
func TestDoContextFormsExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 12} {
		h := newHarness(t, interceptor.WithMaxAttempts(5), interceptor.WithDeadline(time.Hour))
		calls := 0
		_ = h.r.Do(interceptor.MaxAttemptsContext(context.Background(), n), "x", func(context.Context) error { calls++; return errDown })
		if calls != n {
			t.Fatalf("MaxAttemptsContext(%d): %d calls", n, calls)
		}
	}
	h := newHarness(t, interceptor.WithMaxAttempts(2)) // deadline 60 s
	calls := 0
	_ = h.r.Do(interceptor.MaxAttemptsContext(context.Background(), 0), "x", func(context.Context) error { calls++; return errDown })
	if calls != 6 { // the 60 s deadline's schedule
		t.Fatalf("MaxAttemptsContext(0): %d calls, want 6 (the deadline's)", calls)
	}
	h = newHarness(t, interceptor.WithMaxAttempts(0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // a real deadline far off
	defer cancel()
	calls = 0
	_ = h.r.Do(interceptor.DeadlineContext(interceptor.MaxAttemptsContext(ctx, 9), 0), "x", func(context.Context) error { calls++; return errDown })
	if calls != 9 {
		t.Fatalf("DeadlineContext(0) with a cap of 9: %d calls, want 9 (no retry deadline of its own)", calls)
	}
}
