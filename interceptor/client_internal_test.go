package interceptor

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/vclock"
)

// TestClientInterceptorPerAttemptTimeout: NewClient's interceptor gives
// each attempt of a method its gax timeout as a per-attempt timeout, so a
// hung attempt is cut and retried; r's own per-attempt timeout, or a
// CallPerAttemptTimeout, wins over it; a method without one runs without.
func TestClientInterceptorPerAttemptTimeout(t *testing.T) {
	t.Parallel()
	const method = "/google.iam.v1.IAMPolicy/GetIamPolicy"
	type seen struct {
		calls    int
		deadline []time.Duration // per attempt; -1: none
	}
	run := func(t *testing.T, ropts []Option, method string, copts ...grpc.CallOption) (seen, error) {
		r, err := New(append([]Option{WithClock(vclock.New()), WithRandom(func() float64 { return 0.5 })}, ropts...)...)
		if err != nil {
			t.Fatal(err)
		}
		ci := &clientInterceptor{r: r}
		ci.timeouts.Store(&map[string]time.Duration{"GetIamPolicy": 30 * time.Millisecond})
		var s seen
		inv := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			s.calls++
			if dl, ok := ctx.Deadline(); ok {
				s.deadline = append(s.deadline, time.Until(dl))
			} else {
				s.deadline = append(s.deadline, -1)
			}
			if _, ok := ctx.Deadline(); ok && s.calls == 1 {
				<-ctx.Done() // hung until the per-attempt timeout cuts it (maybe already)
				return status.FromContextError(ctx.Err()).Err()
			}
			return nil
		}
		err = ci.intercept(context.Background(), method, nil, nil, nil, inv, copts...)
		return s, err
	}

	t.Run("method timeout cuts a hung attempt", func(t *testing.T) {
		s, err := run(t, nil, method)
		if err != nil || s.calls != 2 {
			t.Fatalf("err %v after %d attempts; want success on the 2nd", err, s.calls)
		}
		if d := s.deadline[0]; d < 0 || d > 30*time.Millisecond {
			t.Fatalf("first attempt's timeout %v, want the method's 30ms", d)
		}
	})
	t.Run("a method without one", func(t *testing.T) {
		s, err := run(t, nil, "/google.iam.v1.IAMPolicy/SetIamPolicy")
		if err != nil || s.calls != 1 || s.deadline[0] != -1 {
			t.Fatalf("err %v, %d attempts, timeouts %v; want one attempt without a deadline", err, s.calls, s.deadline)
		}
	})
	t.Run("r's own wins", func(t *testing.T) {
		s, err := run(t, []Option{WithPerAttemptTimeout(10 * time.Millisecond)}, method)
		if err != nil || s.calls != 2 || s.deadline[0] > 10*time.Millisecond {
			t.Fatalf("err %v, %d attempts, timeouts %v; want r's 10ms", err, s.calls, s.deadline)
		}
	})
	t.Run("CallPerAttemptTimeout(0) wins", func(t *testing.T) {
		s, err := run(t, nil, method, CallPerAttemptTimeout(0))
		if err != nil || s.calls != 1 || s.deadline[0] != -1 {
			t.Fatalf("err %v, %d attempts, timeouts %v; want one attempt without a deadline", err, s.calls, s.deadline)
		}
	})
	t.Run("the caller's context wins", func(t *testing.T) {
		r, _ := New(WithClock(vclock.New()))
		ci := &clientInterceptor{r: r}
		ci.timeouts.Store(&map[string]time.Duration{"GetIamPolicy": time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := ci.intercept(ctx, method, nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
			return status.FromContextError(ctx.Err()).Err()
		})
		if status.Code(err) != grpccodes.Canceled {
			t.Fatalf("err %v, want CANCELED", err)
		}
	})
}

// BenchmarkNewClientSuccess is the success path of NewClient's interceptor:
// a method without a gax timeout costs a map lookup over r's own path (no
// allocation); one with a timeout runs each attempt under it, as gax did
// (a context and a timer).
func BenchmarkNewClientSuccess(b *testing.B) {
	r, err := New()
	if err != nil {
		b.Fatal(err)
	}
	ci := &clientInterceptor{r: r}
	ci.timeouts.Store(&map[string]time.Duration{"GetIamPolicy": time.Minute})
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	ctx := context.Background()
	for _, bc := range []struct{ name, method string }{
		{"no-timeout", "/google.iam.v1.IAMPolicy/SetIamPolicy"},
		{"method-timeout", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := ci.intercept(ctx, bc.method, nil, nil, nil, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
