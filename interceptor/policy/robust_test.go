package policy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestNewUpdaterRefusesBadInput: a nil Client, a nil Retrier, one not built
// by interceptor.New and a nil option are each refused with an error naming
// them, all at once, and no Updater.
func TestNewUpdaterRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    policy.Client
		r    *interceptor.Retrier
		opts []policy.Option
		want []string
	}{
		{"nil r", e.client, nil, nil, []string{"Retrier", "got nil"}},
		{"zero r", e.client, &interceptor.Retrier{}, nil, []string{"not built by interceptor.New"}},
		{"nil option", e.client, r, []policy.Option{nil}, []string{"option 1 of 1 is nil"}},
		{"all", nil, nil, []policy.Option{policy.WithConflictBackoff(9)}, []string{"Client", "Retrier", "ConflictBackoff(9)"}},
	} {
		u, err := policy.NewUpdater(tc.c, tc.r, tc.opts...)
		if u != nil || err == nil {
			t.Errorf("%s: %v, %v; want an error", tc.name, u, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to name %q", tc.name, err, w)
			}
		}
	}
}

// caller runs an Update on its own goroutine and sends what became of it:
// the recovered panic, "goexit", or a result.
func caller(u *policy.Updater, ctx context.Context, m policy.Mutation) chan any {
	ch := make(chan any, 1)
	go func() {
		returned := false
		defer func() {
			if !returned {
				if r := recover(); r != nil {
					ch <- fmt.Sprintf("panic: %v", r)
				} else {
					ch <- "goexit"
				}
			}
		}()
		p, err := u.Update(ctx, res, m)
		returned = true
		ch <- result{p, err}
	}()
	return ch
}

// TestPanicsReachTheCaller: a panic in the Client, an observer, a logger, a
// classifier or a Mutation reaches a caller of Update as a panic in its own
// goroutine (recover catches it); the batch-mate still succeeds, and a later
// Update works.
func TestPanicsReachTheCaller(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"Client", "observer", "logger", "classifier", "Mutation"} {
		t.Run(source, func(t *testing.T) {
			var armed atomic.Bool
			trip := func() {
				if armed.CompareAndSwap(true, false) {
					panic("boom from the " + source)
				}
			}
			var opts []interceptor.Option
			switch source {
			case "observer":
				opts = append(opts, interceptor.WithObserver(func(context.Context, interceptor.Attempt) { trip() }))
			case "logger":
				opts = append(opts, interceptor.WithLogger(logging.LoggerFunc(func(context.Context, logging.Level, string, ...any) { trip() })))
			case "classifier":
				opts = append(opts, interceptor.WithClassifier(func(_ string, err error) iamcodes.Class { trip(); return iamcodes.OfError(err) }))
			}
			x := holdFirstReadWith(t, opts...)
			x.h.beforeGet2 = func(_ context.Context, n int) error {
				switch {
				case n != 2:
					return nil
				case source == "Client":
					trip()
				case source != "Mutation":
					return status.Error(codes.Unavailable, "down") // observer, logger, classifier run
				}
				return nil
			}
			mut := policy.AddBinding("roles/viewer", "user:a@example.com")
			if source == "Mutation" {
				add := mut
				mut = func(p *iampb.Policy) (bool, error) { trip(); return add(p) }
			}
			a := x.queueAny(t, context.Background(), mut)
			b := x.queueAny(t, context.Background(), policy.AddBinding("roles/viewer", "user:b@example.com"))
			armed.Store(true)
			x.release()
			<-x.first
			ra, rb := <-a, <-b
			panics, oks := 0, 0
			for _, r := range []any{ra, rb} {
				switch v := r.(type) {
				case string:
					if v != "panic: boom from the "+source {
						t.Fatalf("got %q", v)
					}
					panics++
				case result:
					if v.err != nil {
						t.Fatalf("batch-mate failed: %v", v.err)
					}
					oks++
				}
			}
			if panics != 1 || oks != 1 {
				t.Fatalf("a: %v, b: %v", ra, rb)
			}
			if _, err := x.u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
				t.Fatalf("a later update: %v", err)
			}
			if m := members(x.srv.Policy(res), ""); m["user:b@example.com"] != 1 || m["user:later@example.com"] != 1 {
				t.Fatalf("stored %v", m)
			}
		})
	}
}

// TestCancelledCallerReturnsBeforeBatchMatesMutation: a caller whose
// context ends while a batch-mate's Mutation blocks returns before that
// Mutation is released (an ordering check), and its change is left out of
// the reruns.
func TestCancelledCallerReturnsBeforeBatchMatesMutation(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	ctx, cancel := context.WithCancel(context.Background())
	var ranGone atomic.Int32
	grant := policy.AddBinding("roles/viewer", "user:gone@example.com")
	gone := x.queue(t, ctx, func(p *iampb.Policy) (bool, error) { ranGone.Add(1); return grant(p) })
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := policy.AddBinding("roles/viewer", "user:stays@example.com")
	stays := x.queue(t, context.Background(), func(p *iampb.Policy) (bool, error) {
		once.Do(func() { close(entered); <-release })
		return hold(p)
	})
	x.release()
	<-entered
	cancel()
	var released atomic.Bool
	select {
	case r := <-gone:
		if released.Load() {
			t.Fatal("returned after the batch-mate's Mutation was released")
		}
		if status.Code(r.err) != codes.Canceled {
			t.Fatalf("gone: %v", r.err)
		}
	case <-time.After(10 * time.Second): // reached only when the caller is held
		released.Store(true)
		close(release)
		t.Fatal("the cancelled caller was held until its batch-mate's Mutation returned")
	}
	released.Store(true)
	close(release)
	if r := <-stays; r.err != nil {
		t.Fatal(r.err)
	}
	<-x.first
	if n := ranGone.Load(); n != 1 {
		t.Fatalf("the departed caller's mutation ran %d times", n)
	}
}

// TestGoexitInMutation runs goexitChild in a child process (a hang or a
// dead committer there cannot take this test binary down): runtime.Goexit in
// a Mutation ends its caller's goroutine, the batch-mate returns by its
// deadline, and later Updates of the resource work.
func TestGoexitInMutation(t *testing.T) {
	t.Parallel()
	if os.Getenv("IAMRETRY_GOEXIT_CHILD") == "1" {
		goexitChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoexitInMutation$", "-test.v", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "IAMRETRY_GOEXIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "goexit child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func goexitChild(t *testing.T) {
	x := holdFirstRead(t)
	a := x.queueAny(t, context.Background(), func(*iampb.Policy) (bool, error) { runtime.Goexit(); return false, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b := x.queueAny(t, ctx, policy.AddBinding("roles/viewer", "user:b@example.com"))
	x.release()
	<-x.first
	if r := <-a; r != "goexit" {
		t.Fatalf("the Goexit caller: %v", r)
	}
	if r, ok := (<-b).(result); !ok || r.err != nil {
		t.Fatalf("batch-mate: %v", r)
	}
	if _, err := x.u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
		t.Fatalf("a later update: %v", err)
	}
	fmt.Println("goexit child: ok")
}
