package policy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// Tests of the Updater at its limits: each tries to break one promise of the
// package doc, Update's doc or DESIGN.md's "Semantics that tests pin down".

// panicClock is a virtual clock whose Sleep or Now panics while armed.
type panicClock struct {
	*vclock.Clock
	sleepPanics, nowPanics atomic.Bool
}

func (c *panicClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.sleepPanics.CompareAndSwap(true, false) {
		panic("boom from the clock's Sleep")
	}
	return c.Clock.Sleep(ctx, d)
}

func (c *panicClock) Now() time.Time {
	if c.nowPanics.CompareAndSwap(true, false) {
		panic("boom from the clock's Now")
	}
	return c.Clock.Now()
}

// TestUserCodePanicsReachCaller: a panic in the clock (Sleep,
// Now) or the random source, user code the Updater runs on its own
// goroutine, reaches the caller of Update as a panic in its goroutine; the
// process survives and the resource is not wedged.
func TestUserCodePanicsReachCaller(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"Sleep", "Now", "random"} {
		t.Run(source, func(t *testing.T) {
			e := newEnv(t)
			clk := &panicClock{Clock: vclock.New()}
			var randomPanics atomic.Bool
			u, err := newUpdater(e.client, interceptor.WithClock(clk), interceptor.WithRandom(func() float64 {
				if randomPanics.CompareAndSwap(true, false) {
					panic("boom from the random source")
				}
				return 0.5
			}))
			if err != nil {
				t.Fatal(err)
			}
			switch source {
			case "Sleep":
				clk.sleepPanics.Store(true)
			case "Now":
				clk.nowPanics.Store(true)
			case "random":
				randomPanics.Store(true)
			}
			e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
			r := <-caller(u, context.Background(), policy.AddBinding("roles/viewer", "user:a@example.com"))
			if s, ok := r.(string); !ok || !strings.HasPrefix(s, "panic: boom from the") {
				t.Fatalf("the caller got %v, want the panic", r)
			}
			if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
				t.Fatalf("a later update: %v", err)
			}
			if m := members(e.srv.Policy(res), ""); m["user:later@example.com"] != 1 {
				t.Fatalf("stored %v", m)
			}
		})
	}
}

// goexitClient calls runtime.Goexit in its first GetIamPolicy while armed.
type goexitClient struct {
	policy.Client
	armed atomic.Bool
}

func (g *goexitClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gaxCallOption) (*iampb.Policy, error) {
	if g.armed.CompareAndSwap(true, false) {
		goexit()
	}
	return g.Client.GetIamPolicy(ctx, req, opts...)
}

// TestGoexitInClientOrObserver: runtime.Goexit in the Client or
// an observer (a t.FailNow there) ends the goroutine of the caller whose
// read-modify-write ran it (they run on the caller's goroutine), neither
// hangs it nor wedges the resource: later Updates work.
func TestGoexitInClientOrObserver(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"Client", "observer"} {
		t.Run(source, func(t *testing.T) {
			e := newEnv(t)
			g := &goexitClient{Client: e.client}
			var obsArmed atomic.Bool
			u, _ := updater(t, g, interceptor.WithObserver(func(context.Context, interceptor.Attempt) {
				if obsArmed.CompareAndSwap(true, false) {
					goexit()
				}
			}))
			if source == "Client" {
				g.armed.Store(true)
			} else {
				obsArmed.Store(true)
				e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := <-caller(u, ctx, policy.AddBinding("roles/viewer", "user:a@example.com"))
			if r != "goexit" {
				t.Fatalf("the caller got %v, want its goroutine ended by runtime.Goexit", r)
			}
			if _, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
				t.Fatalf("a later update: %v", err)
			}
		})
	}
}

// TestCancelledBeforeFirstAttempt: a context already ended
// reaches no server and returns its own code.
func TestCancelledBeforeFirstAttempt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.Canceled || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), res) {
		t.Fatalf("cancelled: %v", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer dcancel()
	_, err = u.Update(dctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past deadline: %v", err)
	}
	if n := e.gets() + e.sets(); n != 0 {
		t.Fatalf("%d calls reached the server", n)
	}
}

// TestDeadlineShorterThanFirstWait: a caller's deadline sooner
// than the first wait would end: the wait is never started, and the caller
// gets the server's own error at once (one read, the virtual clock still).
func TestDeadlineShorterThanFirstWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, clk := updater(t, e.client, interceptor.WithRandom(func() float64 { return 0.5 }))
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	// The deadlines are set on the virtual clock, moved an hour ahead of
	// the wall clock first: the Updater measures them on that clock, and
	// in real time they are an hour away, whatever the machine's load.
	clk.Advance(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), clk.Now().Add(5*time.Second))
	defer cancel()
	_, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	// The first wait is 1.5 s; the deadline is 5 s away: that wait starts.
	if err != nil {
		t.Fatalf("a 1.5 s wait within a 5 s deadline: %v", err)
	}
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	ctx2, cancel2 := context.WithDeadline(context.Background(), clk.Now().Add(500*time.Millisecond))
	defer cancel2()
	gets := e.gets()
	before := clk.Now()
	_, err = u.Update(ctx2, res, policy.AddBinding("roles/viewer", "user:b@example.com"))
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("got %v, want the server's UNAVAILABLE", err)
	}
	if got := e.gets() - gets; got != 1 {
		t.Fatalf("%d reads, want 1", got)
	}
	if d := clk.Now().Sub(before); d != 0 {
		t.Fatalf("the virtual clock moved %v: a wait past the deadline was started", d)
	}
}

// TestCancelDuringWait: the caller's context ends while the
// Updater waits between attempts: Update returns with the context's code,
// and no further attempt reaches the server.
func TestCancelDuringWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The wall clock, so that the wait is a real one the cancel cuts short.
	u, err := newUpdater(e.client, interceptor.WithBackoff(interceptor.Backoff{Initial: time.Hour, Multiplier: 2, Max: time.Hour}),
		interceptor.WithDeadline(10*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
		done <- err
	}()
	waitFor(t, "the first read", func() bool { return e.gets() == 1 })
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Update did not return when its context was cancelled during a wait")
	}
	waitFor(t, "the committer to end", func() bool { return !policy.Busy(u, res) })
	if n := e.gets(); n != 1 {
		t.Fatalf("%d reads, want 1", n)
	}
}

// TestMaxAttemptsOne: an attempt cap of 1 makes one read and
// returns the server's error.
func TestMaxAttemptsOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client, interceptor.WithMaxAttempts(1))
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Internal)
	_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.Internal || e.gets() != 1 || e.sets() != 0 {
		t.Fatalf("err %v, %d reads, %d writes", err, e.gets(), e.sets())
	}
}

// TestNoMutations: an Update without mutations reads once and
// writes nothing.
func TestNoMutations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client)
	p, err := u.Update(context.Background(), res)
	if err != nil || p == nil || e.gets() != 1 || e.sets() != 0 {
		t.Fatalf("%v, %v, %d reads, %d writes", p, err, e.gets(), e.sets())
	}
}

// nilClient answers (nil, nil): a Client that breaks its contract.
type nilClient struct{ policy.Client }

func (nilClient) GetIamPolicy(context.Context, *iampb.GetIamPolicyRequest, ...gaxCallOption) (*iampb.Policy, error) {
	return nil, nil
}

// TestClientAnswersNil: a Client answering no policy and no
// error gives an error, never a nil dereference or nil, nil.
func TestClientAnswersNil(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, nilClient{e.client}, interceptor.WithMaxAttempts(2))
	p, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if err == nil || p != nil {
		t.Fatalf("%v, %v", p, err)
	}
}

// TestPrincipalLimitInBatch: MaxPrincipals exactly is allowed;
// the coalesced change that would pass it is refused alone, with
// ErrTooManyPrincipals, and its batch-mate's change lands.
func TestPrincipalLimitInBatch(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	// The held first Update adds user:first: seed so that it and a take
	// the policy to MaxPrincipals exactly.
	var ms []string
	for i := range policy.MaxPrincipals - 2 {
		ms = append(ms, fmt.Sprintf("user:u%d@example.com", i))
	}
	x.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: ms}}})
	a := x.queue(t, context.Background(), policy.AddBinding("roles/viewer", "user:last@example.com"))
	b := x.queue(t, context.Background(), policy.AddBinding("roles/editor", "user:over@example.com"))
	x.release()
	<-x.first
	if r := <-a; r.err != nil {
		t.Fatalf("the change to exactly %d: %v", policy.MaxPrincipals, r.err)
	}
	if r := <-b; !errors.Is(r.err, policy.ErrTooManyPrincipals) || status.Code(r.err) != codes.InvalidArgument {
		t.Fatalf("the change past the limit: %v", r.err)
	}
	// A swap at the limit (remove one, add one) keeps it at the limit.
	if _, err := x.u.Update(context.Background(), res,
		policy.RemoveBinding("roles/viewer", "user:u0@example.com"),
		policy.AddBinding("roles/editor", "user:swap@example.com")); err != nil {
		t.Fatalf("a swap at the limit: %v", err)
	}
	m := members(x.srv.Policy(res), "")
	if len(m) != policy.MaxPrincipals || m["user:over@example.com"] != 0 || m["user:swap@example.com"] != 1 {
		t.Fatalf("%d principals stored", len(m))
	}
}

// TestMembersAddRemoveRefuseAlike: for malformed members, Add
// and Remove refuse alike (INVALID_ARGUMENT, naming the member), and
// nothing is read or written.
func TestMembersAddRemoveRefuseAlike(t *testing.T) {
	t.Parallel()
	bad := []string{
		"", " ", "user:", "user:@", "user:a@", "user:@b", "user:a@b@c", "USER:a@example.com",
		"user:a@example.com ", "user :a@example.com", "serviceAccount:", "serviceAccount:p.svc.id.goog[",
		"serviceAccount:p.svc.id.goog[ns]", "serviceAccount:p.svc.id.goog[ns/]", "serviceAccount:.svc.id.goog[ns/k]",
		"serviceAccount:p.svc.id.goog[ns/k/x]", "group:x", "domain:", "domain:example", "domain:a@b.com",
		"principal://", "principal://host", "principal:///path", "principalSet://", "deleted:user:a@example.com",
		"deleted:user:a@example.com?uid=", "deleted:", "allusers", "allUsers:x", "projectOwner:", "projectOwner:a/b",
		"alice@example.com", "\x00", "user:a\x00@example.com\n",
	}
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}}}
	for _, m := range bad {
		for name, mut := range map[string]policy.Mutation{
			"AddBinding":    policy.AddBinding("roles/viewer", m),
			"RemoveBinding": policy.RemoveBinding("roles/viewer", m),
			"RemoveMember":  policy.RemoveMember(m),
		} {
			changed, err := mut(p)
			if changed || status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), fmt.Sprintf("%q", m)) {
				t.Errorf("%s(%q): %v, %v", name, m, changed, err)
			}
		}
	}
}

// TestMemberCaseAcrossAddRemove: a member granted in one case is
// the same principal in another: adding again changes nothing, removing
// in another case revokes it (email parts only; prefixes are exact).
func TestMemberCaseAcrossAddRemove(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{
		{"user:Alice@Example.com", "user:alice@EXAMPLE.COM"},
		{"serviceAccount:Robot@P.iam.gserviceaccount.com", "serviceAccount:robot@p.iam.gserviceaccount.com"},
		{"group:Team@Example.com", "group:team@example.com"},
		{"domain:Example.COM", "domain:example.com"},
		{"deleted:user:Bob@Example.com?uid=123", "deleted:user:bob@example.com?uid=123"},
	} {
		p := &iampb.Policy{}
		if ch, err := policy.AddBinding("roles/viewer", pair[0])(p); !ch || err != nil {
			t.Fatalf("add %s: %v %v", pair[0], ch, err)
		}
		if ch, err := policy.AddBinding("roles/viewer", pair[1])(p); ch || err != nil {
			t.Errorf("add %s after %s: changed %v, %v", pair[1], pair[0], ch, err)
		}
		if ch, err := policy.RemoveBinding("roles/viewer", pair[1])(p); !ch || err != nil || len(p.Bindings) != 0 {
			t.Errorf("remove %s after adding %s: changed %v, %v, left %v", pair[1], pair[0], ch, err, p.Bindings)
		}
	}
}
