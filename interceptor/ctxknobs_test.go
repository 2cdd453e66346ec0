package interceptor_test

// The context forms of the per-call knobs (DisableContext,
// RetryNotFoundContext, DeadlineContext, MaxAttemptsContext) on the
// interceptor, Retrier.Do and WaitVisible; the RoundTripper's and the
// Updater's are in interceptor_test and policy.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

type knobCase struct {
	name  string
	ctx   func(context.Context) context.Context
	opts  []grpc.CallOption
	code  grpccodes.Code // what the server fails with (10 times, then OK)
	calls int            // attempts made
}

var knobCases = []knobCase{
	{"none", func(c context.Context) context.Context { return c }, nil, grpccodes.Unavailable, 6},
	{"DisableContext", interceptor.DisableContext, nil, grpccodes.Unavailable, 1},
	{"RetryNotFoundContext", interceptor.RetryNotFoundContext, nil, grpccodes.NotFound, 6},
	{"no RetryNotFoundContext", func(c context.Context) context.Context { return c }, nil, grpccodes.NotFound, 1},
	// waits 1.5, 2.5, 4.5 (8.5 s); the next, 8.5 s, would end past 10 s
	{"DeadlineContext(10s)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 10*time.Second) }, nil, grpccodes.Unavailable, 4},
	// no retry deadline of its own: all 10 failures are retried
	{"DeadlineContext(0)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 0) }, nil, grpccodes.Unavailable, 11},
	{"MaxAttemptsContext(3)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 3) }, nil, grpccodes.Unavailable, 3},
	{"MaxAttemptsContext(1)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 1) }, nil, grpccodes.Unavailable, 1},
	{"both", func(c context.Context) context.Context {
		return interceptor.MaxAttemptsContext(interceptor.DeadlineContext(c, 10*time.Second), 2)
	}, nil, grpccodes.Unavailable, 2},
}

// gRPC only: a CallOption that says something wins over the context form.
var knobCallOptionCases = []knobCase{
	{"CallMaxAttempts(5) over MaxAttemptsContext(3)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 3) },
		[]grpc.CallOption{interceptor.CallMaxAttempts(5)}, grpccodes.Unavailable, 5},
	// 1.5, 4, 8.5, 17 s; the next wait would end at 33.5 s, past 30 s
	{"CallDeadline(30s) over DeadlineContext(10s)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 10*time.Second) },
		[]grpc.CallOption{interceptor.CallDeadline(30 * time.Second)}, grpccodes.Unavailable, 5},
	{"MaxAttemptsContext(2) beside CallDeadline(30s)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 2) },
		[]grpc.CallOption{interceptor.CallDeadline(30 * time.Second)}, grpccodes.Unavailable, 2},
}

func TestContextFormsInterceptor(t *testing.T) {
	t.Parallel()
	for _, c := range append(knobCases, knobCallOptionCases...) {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, interceptor.WithoutRetryBudget())
			s := &script{errs: fail(c.code, 10)}
			_ = h.call(c.ctx(context.Background()), s, getPolicy, nil, c.opts...)
			if s.calls != c.calls {
				t.Fatalf("%d attempts, want %d", s.calls, c.calls)
			}
		})
	}
}

func TestContextFormsDo(t *testing.T) {
	t.Parallel()
	for _, c := range knobCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, interceptor.WithoutRetryBudget())
			calls := 0
			_ = h.r.Do(c.ctx(context.Background()), "step", func(context.Context) error {
				calls++
				if calls <= 10 {
					return status.Error(c.code, "down")
				}
				return nil
			})
			if calls != c.calls {
				t.Fatalf("%d attempts, want %d", calls, c.calls)
			}
		})
	}
}

// WaitVisible retries NOT_FOUND always; the context forms still bound it.
func TestContextFormsWaitVisible(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		ctx   func(context.Context) context.Context
		reads int
	}{
		{"DisableContext", interceptor.DisableContext, 1},
		{"MaxAttemptsContext(2)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 2) }, 2},
		// waits 1.5, 2.5: the second would end at 4 s, past 3 s
		{"DeadlineContext(3s)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 3*time.Second) }, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, interceptor.WithoutRetryBudget())
			reads := 0
			_, err := interceptor.WaitVisible(c.ctx(context.Background()), h.r, "get robot", func(context.Context) (int, error) {
				reads++
				return 0, status.Error(grpccodes.NotFound, "not yet")
			}, interceptor.ConsecutiveReads(1))
			if status.Code(err) != grpccodes.NotFound {
				t.Fatalf("WaitVisible: %v, want NOT_FOUND", err)
			}
			if reads != c.reads {
				t.Fatalf("%d reads, want %d", reads, c.reads)
			}
		})
	}
}

// A context form is read only after a failure: a call that succeeds at
// once is untouched by it, and it never reaches the invoker as an option.
func TestContextFormsSuccess(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := interceptor.MaxAttemptsContext(interceptor.DeadlineContext(interceptor.DisableContext(context.Background()), time.Second), 1)
	s := &script{}
	if err := h.call(ctx, s, getPolicy, nil); err != nil || s.calls != 1 || len(h.attempts) != 0 {
		t.Fatalf("err %v, %d calls, %d attempts observed", err, s.calls, len(h.attempts))
	}
}

func TestContextFormsNegativePanics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"DeadlineContext", func() { interceptor.DeadlineContext(context.Background(), -time.Second) }, "DeadlineContext(ctx, -1s)"},
		{"MaxAttemptsContext", func() { interceptor.MaxAttemptsContext(context.Background(), -2) }, "MaxAttemptsContext(ctx, -2)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.Contains(msg, c.want) {
					t.Fatalf("panic %q, want one naming %q", msg, c.want)
				}
			}()
			c.f()
		})
	}
}
