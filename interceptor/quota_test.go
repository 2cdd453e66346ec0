package interceptor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// The quota rule of issue 28 on the faces that take a script or a function
// (the REST face: Test429RetryAfterIsRetryInfo; the fake: interceptor_test):
// a RESOURCE_EXHAUSTED without a server delay is retried no sooner than
// 30 s (30 s·2^k plus up to a tenth more, k counting the call's quota
// rejections), whatever the method, within the deadline; with RetryInfo,
// its delay is the floor, and one past the deadline ends the call at once.

const createKey = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"

func TestQuotaDelay(t *testing.T) {
	t.Parallel()
	for k, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute} {
		if got := interceptor.QuotaDelay(k, 0); got != want {
			t.Errorf("QuotaDelay(%d, 0) = %v, want %v", k, got, want)
		}
		if got := interceptor.QuotaDelay(k, 0.999999); got < want || got > want+want/10 {
			t.Errorf("QuotaDelay(%d, ~1) = %v, want within a tenth above %v", k, got, want)
		}
	}
	if got := interceptor.QuotaDelay(1000, 0.5); got <= 0 || got > 10*time.Hour {
		t.Errorf("QuotaDelay(1000) = %v: want positive and bounded", got)
	}
	if interceptor.QuotaWait != 30*time.Second {
		t.Errorf("QuotaWait = %v", interceptor.QuotaWait)
	}
}

func TestQuotaWithoutDelayWaitsThirtySeconds(t *testing.T) {
	t.Parallel()
	quota := status.Error(grpccodes.ResourceExhausted, "Quota exceeded")
	t.Run("interceptor, unsafe method", func(t *testing.T) {
		h := newHarness(t)
		s := &script{errs: []error{quota}}
		if err := h.call(context.Background(), s, createKey, nil); err != nil || s.calls != 2 {
			t.Fatalf("calls %d err %v attempts %+v", s.calls, err, h.attempts)
		}
		if got, want := h.clock.Sleeps(), []time.Duration{interceptor.QuotaDelay(0, 0.5)}; !slices.Equal(got, want) {
			t.Fatalf("waits %v, want %v", got, want)
		}
	})
	t.Run("interceptor, second rejection waits past the deadline", func(t *testing.T) {
		h := newHarness(t)
		s := &script{errs: []error{quota, quota}}
		err := h.call(context.Background(), s, getPolicy, nil)
		if s.calls != 2 || err != s.errs[1] {
			t.Fatalf("calls %d err %v, want the second rejection after 2 calls", s.calls, err)
		}
		// 31.5 s, then 63 s would end past the 60 s deadline.
		if got := h.clock.Sleeps(); !slices.Equal(got, []time.Duration{interceptor.QuotaDelay(0, 0.5)}) {
			t.Fatalf("waits %v", got)
		}
		if a := h.attempts[1]; a.Reason != interceptor.DeadlineReached || a.Retrying {
			t.Fatalf("second attempt %+v, want DeadlineReached", a)
		}
	})
	t.Run("interceptor, 300 s deadline: exponential", func(t *testing.T) {
		h := newHarness(t, interceptor.WithDeadline(300*time.Second))
		s := &script{errs: []error{quota, quota, quota}}
		if err := h.call(context.Background(), s, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{interceptor.QuotaDelay(0, 0.5), interceptor.QuotaDelay(1, 0.5), interceptor.QuotaDelay(2, 0.5)}
		if got := h.clock.Sleeps(); !slices.Equal(got, want) {
			t.Fatalf("waits %v, want %v", got, want)
		}
	})
	t.Run("interceptor, kinds keep their own exponents", func(t *testing.T) {
		h := newHarness(t, interceptor.WithDeadline(300*time.Second))
		down := status.Error(grpccodes.Unavailable, "down")
		s := &script{errs: []error{down, quota, down}}
		if err := h.call(context.Background(), s, getPolicy, nil); err != nil {
			t.Fatal(err)
		}
		want := []time.Duration{1500 * time.Millisecond, interceptor.QuotaDelay(0, 0.5), 2500 * time.Millisecond}
		if got := h.clock.Sleeps(); !slices.Equal(got, want) {
			t.Fatalf("waits %v, want %v", got, want)
		}
	})
	t.Run("Do", func(t *testing.T) {
		h := newHarness(t)
		runs := 0
		err := h.r.Do(context.Background(), "mine", func(context.Context) error {
			runs++
			if runs == 1 {
				return quota
			}
			return nil
		})
		if err != nil || runs != 2 {
			t.Fatalf("runs %d err %v", runs, err)
		}
		if got := h.clock.Sleeps(); !slices.Equal(got, []time.Duration{interceptor.QuotaDelay(0, 0.5)}) {
			t.Fatalf("waits %v", got)
		}
	})
	t.Run("Transact", func(t *testing.T) {
		h := newHarness(t)
		s := &etagStore{writeFaults: []error{quota}}
		if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
			t.Fatal(err)
		}
		if got := h.clock.Sleeps(); !slices.Equal(got, []time.Duration{interceptor.QuotaDelay(0, 0.5)}) {
			t.Fatalf("waits %v", got)
		}
		if s.count("a") != 1 {
			t.Fatalf("a landed %d times", s.count("a"))
		}
	})
	t.Run("a context deadline sooner than 30 s ends the call at once", func(t *testing.T) {
		h := newHarness(t)
		ctx, cancel := context.WithDeadline(context.Background(), h.clock.Now().Add(20*time.Second))
		defer cancel()
		s := &script{errs: []error{quota}}
		err := h.call(ctx, s, getPolicy, nil)
		if s.calls != 1 || err != s.errs[0] || len(h.clock.Sleeps()) != 0 || h.attempts[0].Reason != interceptor.ContextDeadline {
			t.Fatalf("calls %d err %v sleeps %v attempts %+v", s.calls, err, h.clock.Sleeps(), h.attempts)
		}
	})
}

func TestQuotaRetryInfoIsTheFloor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{errs: []error{withRetryInfo(grpccodes.ResourceExhausted, 5*time.Second), withRetryInfo(grpccodes.ResourceExhausted, time.Second)}}
	if err := h.call(context.Background(), s, createKey, nil); err != nil {
		t.Fatal(err)
	}
	// 5 s over the quota exponent's first step 1.5 s; then its second
	// step, 2.5 s, over 1 s.
	if got, want := h.clock.Sleeps(), secs(5, 2.5); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	// The account quota's RetryInfo of a day and a second: past the
	// deadline, so the call ends at once with the server's error.
	h = newHarness(t)
	s = &script{errs: []error{withRetryInfo(grpccodes.ResourceExhausted, 86401*time.Second)}}
	err := h.call(context.Background(), s, createKey, nil)
	if s.calls != 1 || err != s.errs[0] || len(h.clock.Sleeps()) != 0 || h.attempts[0].Reason != interceptor.DeadlineReached {
		t.Fatalf("calls %d err %v sleeps %v attempts %+v", s.calls, err, h.clock.Sleeps(), h.attempts)
	}
}

// TestQuotaSizeLimitNotRetried: gRPC's own message size limits answer
// RESOURCE_EXHAUSTED too; they are not quota and are not retried.
func TestQuotaSizeLimitNotRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{errs: []error{status.Error(grpccodes.ResourceExhausted, "grpc: received message larger than max (5000 vs. 4096)")}}
	err := h.call(context.Background(), s, getPolicy, nil)
	if s.calls != 1 || err != s.errs[0] || h.attempts[0].Reason != interceptor.NotRetryable {
		t.Fatalf("calls %d err %v attempts %+v", s.calls, err, h.attempts)
	}
}
