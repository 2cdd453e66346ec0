package interceptor_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// TestTransactHookPanicsAndGoexits: a panic or a runtime.Goexit in Read,
// Modify, Write, Etag (at the read and at the fresh read that judges a
// FAILED_PRECONDITION), Classify or an observer reaches the goroutine
// that called Transact (the panic's value recovered there, the Goexit
// ending it), with and without a per-attempt timeout; nothing is left
// behind (goleak in TestMain), and the same Retrier runs the next
// transaction.
func TestTransactHookPanicsAndGoexits(t *testing.T) {
	type hook struct {
		name string
		// arm makes tx (on s) or the Retrier's observer call f once.
		arm func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func())
		// observer: f is called by the observer instead.
		observer bool
	}
	once := func(f func()) func() {
		var done atomic.Bool
		return func() {
			if done.CompareAndSwap(false, true) {
				f()
			}
		}
	}
	hooks := []hook{
		{name: "Read", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			read := tx.Read
			tx.Read = func(ctx context.Context) (*toyDoc, error) { f(); return read(ctx) }
		}},
		{name: "Modify", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			m := tx.Modify
			tx.Modify = func(d *toyDoc) (*toyDoc, bool, error) { f(); return m(d) }
		}},
		{name: "Write", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			w := tx.Write
			tx.Write = func(ctx context.Context, d *toyDoc) (*toyDoc, error) { f(); return w(ctx, d) }
		}},
		{name: "Etag", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			tx.Etag = func(d *toyDoc) string { f(); return d.Etag }
		}},
		{name: "Etag of the fresh read", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			s.steal, s.staleCode = 1, grpccodes.FailedPrecondition
			n := 0
			tx.Etag = func(d *toyDoc) string {
				if n++; n == 2 {
					f()
				}
				return d.Etag
			}
		}},
		{name: "Classify", arm: func(s *etagStore, tx *interceptor.ReadModifyWrite[*toyDoc], f func()) {
			s.writeFaults = []error{errDown}
			tx.Classify = func(error) (codes.Class, bool) { f(); return 0, false }
		}},
		{name: "observer", observer: true, arm: func(s *etagStore, _ *interceptor.ReadModifyWrite[*toyDoc], _ func()) {
			s.writeFaults = []error{errDown}
		}},
	}
	for _, perAttempt := range []time.Duration{0, time.Minute} {
		for _, h := range hooks {
			for _, kind := range []string{"panic", "goexit"} {
				t.Run(h.name+"/"+kind+"/"+perAttempt.String(), func(t *testing.T) {
					var fire func()
					if kind == "panic" {
						fire = once(func() { panic("boom") })
					} else {
						fire = once(runtime.Goexit)
					}
					var armed atomic.Bool
					armed.Store(h.observer)
					opts := []interceptor.Option{interceptor.WithObserver(func(context.Context, interceptor.Attempt) {
						if armed.CompareAndSwap(true, false) {
							fire()
						}
					})}
					if perAttempt > 0 {
						opts = append(opts, interceptor.WithPerAttemptTimeout(perAttempt))
					}
					hr := newHarness(t, opts...)
					s := &etagStore{}
					tx := s.add("a")
					if !h.observer {
						h.arm(s, &tx, fire)
					} else {
						h.arm(s, &tx, nil)
					}
					type end struct {
						returned  bool
						recovered any
					}
					ch := make(chan end, 1)
					go func() {
						var e end
						defer func() {
							e.recovered = recover()
							ch <- e
						}()
						interceptor.Transact(context.Background(), hr.r, tx)
						e.returned = true
					}()
					e := <-ch
					switch {
					case kind == "panic" && e.recovered != "boom":
						t.Fatalf("the caller's goroutine recovered %v (returned %v), want the panic", e.recovered, e.returned)
					case kind == "goexit" && (e.returned || e.recovered != nil):
						t.Fatalf("returned %v, recovered %v: the Goexit did not end the caller's goroutine", e.returned, e.recovered)
					}
					s2 := &etagStore{}
					if _, err := interceptor.Transact(context.Background(), hr.r, s2.add("b")); err != nil || s2.count("b") != 1 {
						t.Fatalf("the next Transact on the Retrier: %v, items %v", err, s2.items)
					}
				})
			}
		}
	}
}
