package policy_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// trippingMeter is a MeterProvider whose Int64Histograms (and, with
// counters, Int64Counters) panic on the first Record (Add) after armed is
// set.
type trippingMeter struct {
	noop.MeterProvider
	armed    *atomic.Bool
	counters bool
}

func (p trippingMeter) Meter(string, ...metric.MeterOption) metric.Meter {
	return trippingMeterM{armed: p.armed, counters: p.counters}
}

type trippingMeterM struct {
	noop.Meter
	armed    *atomic.Bool
	counters bool
}

func (m trippingMeterM) Int64Histogram(string, ...metric.Int64HistogramOption) (metric.Int64Histogram, error) {
	return trippingHist{armed: m.armed}, nil
}

type trippingHist struct {
	noop.Int64Histogram
	armed *atomic.Bool
}

func (h trippingHist) Record(context.Context, int64, ...metric.RecordOption) {
	if h.armed.CompareAndSwap(true, false) {
		panic("boom from the meter")
	}
}

// TestMeterPanicWhileDeliveringReachesACaller: a panic in the
// MeterProvider while the batch's results are handed out (the call's
// record) reaches a caller as a panic in its goroutine; no caller is left
// waiting forever, and a later Update works.
func TestMeterPanicWhileDeliveringReachesACaller(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	x := holdFirstReadWith(t, interceptor.WithMeterProvider(trippingMeter{armed: &armed}))
	x.h.beforeGet2 = func(_ context.Context, n int) error {
		if n == 2 {
			return status.Error(codes.Unavailable, "down") // the batch retries: its calls record retries
		}
		return nil
	}
	a := x.queueAny(t, context.Background(), policy.AddBinding("roles/viewer", "user:a@example.com"))
	b := x.queueAny(t, context.Background(), policy.AddBinding("roles/viewer", "user:b@example.com"))
	armed.Store(true)
	x.release()
	<-x.first
	panics := 0
	for name, ch := range map[string]chan any{"a": a, "b": b} {
		select {
		case r := <-ch:
			switch v := r.(type) {
			case string:
				if v != "panic: boom from the meter" {
					t.Fatalf("%s: %q", name, v)
				}
				panics++
			case result:
				if v.err != nil {
					t.Fatalf("%s: %v", name, v.err)
				}
			}
		case <-time.After(10 * time.Second): // reached only when the caller hangs
			t.Fatalf("%s never returned", name)
		}
	}
	if panics != 1 {
		t.Fatalf("%d callers panicked, want 1", panics)
	}
	if _, err := x.u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
		t.Fatalf("a later update: %v", err)
	}
}

func (m trippingMeterM) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if !m.counters {
		return noop.Int64Counter{}, nil
	}
	return trippingCounter{armed: m.armed}, nil
}

type trippingCounter struct {
	noop.Int64Counter
	armed *atomic.Bool
}

func (c trippingCounter) Add(context.Context, int64, ...metric.AddOption) {
	if c.armed.CompareAndSwap(true, false) {
		panic("boom from the meter")
	}
}

// TestMeterPanicWhileLeavingLocksNothing: a panic in the MeterProvider
// while a caller that gave up is counted reaches that caller, and leaves
// the Updater working: a later Update of the resource returns.
//
// The caller's batch fails its read and retries it; the retried read is
// held until the caller has left (or the read's context ends, which the
// caller's leaving brings about), so the batch cannot hand the caller a
// result before it gives up, however the goroutines are scheduled.
func TestMeterPanicWhileLeavingLocksNothing(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	failed := make(chan struct{}, 1)
	x := holdFirstReadWith(t, interceptor.WithMeterProvider(trippingMeter{armed: &armed, counters: true}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Err != nil {
				select {
				case failed <- struct{}{}:
				default:
				}
			}
		}))
	left := make(chan struct{})
	x.h.beforeGet2 = func(ctx context.Context, n int) error {
		switch n {
		case 2:
			return status.Error(codes.Unavailable, "down") // the batch waits its backoff
		case 3: // the retry: held until the caller has left
			select {
			case <-left:
			case <-ctx.Done():
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := x.queueAny(t, ctx, policy.AddBinding("roles/viewer", "user:a@example.com"))
	x.release()
	<-x.first
	<-failed
	armed.Store(true)
	cancel()
	r := <-a
	close(left)
	if r != "panic: boom from the meter" {
		t.Fatalf("a: %v", r)
	}
	later := make(chan error, 1)
	go func() {
		_, err := x.u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:later@example.com"))
		later <- err
	}()
	select {
	case err := <-later:
		if err != nil {
			t.Fatalf("a later update: %v", err)
		}
	case <-time.After(10 * time.Second): // reached only when the Updater is stuck
		t.Fatal("a later update never returned")
	}
}
