package interceptor_test

// The stacked-retry detector's promises tried against awkward input: a
// context value of any type, requests reused or distinct, thousands of
// give-ups (bounded, holding no request alive), and many goroutines.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
)

// stackWarns counts the detector's Warns through WithLogger.
type stackWarns struct{ n atomic.Int64 }

func (w *stackWarns) option() interceptor.Option {
	return interceptor.WithLogger(logging.LoggerFunc(func(_ context.Context, l logging.Level, msg string, _ ...any) {
		if l == logging.LevelWarn && len(msg) > 0 && containsLayerAbove(msg) {
			w.n.Add(1)
		}
	}))
}

func containsLayerAbove(msg string) bool {
	for i := 0; i+len("layer above") <= len(msg); i++ {
		if msg[i:i+len("layer above")] == "layer above" {
			return true
		}
	}
	return false
}

// giveUp makes one call that fails twice and gives up (attempt cap 2).
func giveUp(h *harness, ctx context.Context, req any) {
	s := &script{errs: fail(grpccodes.Unavailable, 10)}
	_ = h.call(ctx, s, getPolicy, req)
}

// uncomparableCtx is a context whose dynamic value cannot be compared with
// == (a func field): comparing two of them panics.
type uncomparableCtx struct {
	context.Context
	f func()
}

// wrapCtx is a comparable struct type holding any context: its values
// compare by comparing what they hold.
type wrapCtx struct{ context.Context }

// TestStackedContextValueNotComparable: a caller's context of a comparable
// struct type that holds an uncomparable value must not make the detector
// panic (== on two such interface values panics at run time).
func TestStackedContextValueNotComparable(t *testing.T) {
	w := &stackWarns{}
	h := newHarness(t, interceptor.WithMaxAttempts(2), w.option())
	ctx := wrapCtx{uncomparableCtx{Context: context.Background(), f: func() {}}}
	req := &iampb.GetIamPolicyRequest{Resource: "projects/p"}
	giveUp(h, ctx, req)
	defer func() {
		if v := recover(); v != nil {
			t.Fatalf("the detector panicked on a caller's context: %v", v)
		}
	}()
	giveUp(h, ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
}

// TestStackedSameContextDistinctResources: a loop over resources under one
// context, each call giving up in an outage, is not a stacked retry.
func TestStackedSameContextDistinctResources(t *testing.T) {
	w := &stackWarns{}
	h := newHarness(t, interceptor.WithMaxAttempts(2), w.option())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 50 {
		giveUp(h, ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("%d stacked reports for distinct resources under one context", n)
	}
}

// TestStackedRequestReusedMinutesApart: one request value reused by calls
// minutes apart (fresh contexts) is not reported; within seconds it is,
// once per method.
func TestStackedRequestReusedMinutesApart(t *testing.T) {
	w := &stackWarns{}
	h := newHarness(t, interceptor.WithMaxAttempts(2), w.option())
	req := &iampb.GetIamPolicyRequest{Resource: "projects/p"}
	for range 5 {
		giveUp(h, context.Background(), req)
		h.clock.Advance(3 * time.Minute)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("%d stacked reports for a request reused minutes apart", n)
	}
	// Reused at once: a loop of the caller's own. Reported once.
	for range 5 {
		giveUp(h, context.Background(), req)
	}
	if n := w.n.Load(); n != 1 {
		t.Fatalf("%d Warns for a tight loop over one request, want 1 (once per method)", n)
	}
}

// TestStackedTableHoldsNoRequest: thousands of distinct give-ups under
// distinct contexts keep no request alive (weak pointers) and report
// nothing.
func TestStackedTableHoldsNoRequest(t *testing.T) {
	w := &stackWarns{}
	h := newHarness(t, interceptor.WithMaxAttempts(2), w.option())
	var freed atomic.Int64
	const n = 2000
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		req := &iampb.GetIamPolicyRequest{Resource: "projects/p" + itoa(i)}
		runtime.AddCleanup(req, func(*atomic.Int64) { freed.Add(1) }, &freed)
		giveUp(h, ctx, req)
		cancel()
	}
	h.attempts = nil
	for range 20 {
		runtime.GC()
		if freed.Load() == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if got := freed.Load(); got != n {
		t.Fatalf("%d of %d requests freed: the table keeps requests alive", got, n)
	}
	if w.n.Load() != 0 {
		t.Fatalf("%d reports for distinct calls", w.n.Load())
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestStackedConcurrent: many goroutines giving up and retrying on one
// Retrier; run with -race. A tight loop of each goroutine's own over its
// request is reported, and the Warn is logged once.
func TestStackedConcurrent(t *testing.T) {
	w := &stackWarns{}
	var count atomic.Int64
	r, err := interceptor.New(interceptor.WithMaxAttempts(2), w.option(),
		interceptor.WithClock(noSleepClock{}),
		interceptor.WithObserver(func(context.Context, interceptor.Attempt) { count.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := &iampb.GetIamPolicyRequest{Resource: "projects/g" + itoa(g)}
			for range 20 {
				s := &script{errs: fail(grpccodes.Unavailable, 10)}
				_ = r.UnaryClientInterceptor()(context.Background(), getPolicy, req, nil, nil, s.invoke)
			}
		}()
	}
	wg.Wait()
	if n := w.n.Load(); n != 1 {
		t.Fatalf("%d Warns, want 1 (once per method per Retrier)", n)
	}
}

// noSleepClock is a clock whose sleeps return at once (time does not move).
type noSleepClock struct{}

func (noSleepClock) Now() time.Time { return time.Unix(1e9, 0) }

func (noSleepClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// TestStackedOncePerMethodOutsideTable: two methods of a service of the
// caller's own (made retryable with WithSafeToRetry) each get their Warn:
// "once per method", not once for every method outside the IAM table.
func TestStackedOncePerMethodOutsideTable(t *testing.T) {
	w := &stackWarns{}
	h := newHarness(t, interceptor.WithMaxAttempts(2), w.option(),
		interceptor.WithSafeToRetry(func(string, any) bool { return true }))
	for _, m := range []string{"/my.v1.Service/GetThing", "/my.v1.Service/ListThings"} {
		req := &iampb.GetIamPolicyRequest{Resource: m}
		for range 2 {
			s := &script{errs: fail(grpccodes.Unavailable, 10)}
			_ = h.call(context.Background(), s, m, req)
		}
	}
	if n := w.n.Load(); n != 2 {
		t.Fatalf("%d Warns for two methods stacked, want 2", n)
	}
}

// TestStackedTableReleasesContexts: the table holds the contexts of its
// last stackSlots (16) give-ups only: a context pushed out by later
// give-ups is collectable (with whatever its values hold).
func TestStackedTableReleasesContexts(t *testing.T) {
	h := newHarness(t, interceptor.WithMaxAttempts(2))
	var freed atomic.Int64
	func() {
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), struct{ k int }{1}, make([]byte, 1<<20)))
		defer cancel()
		inner := ctx.Value(struct{ k int }{1}).([]byte)
		runtime.AddCleanup(&inner[0], func(f *atomic.Int64) { f.Add(1) }, &freed)
		giveUp(h, ctx, &iampb.GetIamPolicyRequest{Resource: "projects/old"})
	}()
	for i := range 32 {
		ctx, cancel := context.WithCancel(context.Background())
		giveUp(h, ctx, &iampb.GetIamPolicyRequest{Resource: "projects/new" + itoa(i)})
		cancel()
	}
	h.attempts = nil
	for range 20 {
		runtime.GC()
		if freed.Load() == 1 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("a context pushed out of the table is still held (its 1 MiB value was not freed)")
}
