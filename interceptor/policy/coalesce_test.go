package policy_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// held is an Updater whose first read blocks until release is called, so
// that a test can queue callers behind it deterministically.
type held struct {
	*env
	u       *policy.Updater
	h       *hookClient
	release func()
	first   chan result
}

type result struct {
	p   *iampb.Policy
	err error
}

func holdFirstRead(t *testing.T) *held { return holdFirstReadWith(t) }

// holdFirstReadWith is holdFirstRead with options for the Updater.
func holdFirstReadWith(t *testing.T, opts ...interceptor.Option) *held {
	e := newEnv(t)
	gate := make(chan struct{})
	var once sync.Once
	h := &hookClient{Client: e.client}
	h.beforeGet = func(ctx context.Context, n int) error {
		if n == 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if f := h.beforeGet2; f != nil {
			return f(ctx, n)
		}
		return nil
	}
	u, _ := updater(t, h, opts...)
	x := &held{env: e, u: u, h: h, release: func() { once.Do(func() { close(gate) }) }, first: make(chan result, 1)}
	t.Cleanup(x.release)
	go func() {
		p, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:first@example.com"))
		x.first <- result{p, err}
	}()
	waitFor(t, "the first read", func() bool { return h.ngets.Load() == 1 })
	return x
}

// queue starts an Update and waits until it is queued behind the held one.
func (x *held) queue(t *testing.T, ctx context.Context, m ...policy.Mutation) chan result {
	t.Helper()
	before := policy.Pending(x.u, res)
	ch := make(chan result, 1)
	go func() {
		p, err := x.u.Update(ctx, res, m...)
		ch <- result{p, err}
	}()
	waitFor(t, "the update to queue", func() bool { return policy.Pending(x.u, res) == before+1 })
	return ch
}

// queueAny is queue for caller: the channel gets a result, a recovered
// panic or "goexit".
func (x *held) queueAny(t *testing.T, ctx context.Context, m policy.Mutation) chan any {
	t.Helper()
	before := policy.Pending(x.u, res)
	ch := caller(x.u, ctx, m)
	waitFor(t, "the update to queue", func() bool { return policy.Pending(x.u, res) == before+1 })
	return ch
}

// TestCoalescedBatch: callers that arrive while a read-modify-write is in
// flight join the next one, in arrival order; a failing mutation fails only
// its caller and its change is discarded; every other caller gets the policy
// its batch wrote.
func TestCoalescedBatch(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	ctx := context.Background()
	var order []string
	record := func(name string, m policy.Mutation) policy.Mutation {
		return func(p *iampb.Policy) (bool, error) {
			order = append(order, name)
			return m(p)
		}
	}
	boom := errors.New("boom")
	a := x.queue(t, ctx, record("a", policy.AddBinding("roles/viewer", "user:a@example.com")))
	b := x.queue(t, ctx,
		record("b", policy.AddBinding("roles/viewer", "user:b@example.com")),
		func(*iampb.Policy) (bool, error) { return false, boom })
	c := x.queue(t, ctx, record("c", policy.AddBinding("roles/viewer", "user:c@example.com")))
	x.release()

	if r := <-x.first; r.err != nil {
		t.Fatal(r.err)
	}
	ra, rb, rc := <-a, <-b, <-c
	if !errors.Is(rb.err, boom) || rb.p != nil {
		t.Fatalf("b: %v", rb.err)
	}
	if ra.err != nil || rc.err != nil {
		t.Fatalf("a: %v, c: %v", ra.err, rc.err)
	}
	stored := e(x).srv.Policy(res)
	if !proto.Equal(ra.p, stored) || !proto.Equal(rc.p, stored) {
		t.Fatalf("results differ from the stored policy %v", stored)
	}
	if ra.p == rc.p {
		t.Fatal("callers share one *Policy")
	}
	m := members(stored, "roles/viewer")
	if len(m) != 3 || m["user:first@example.com"] != 1 || m["user:a@example.com"] != 1 || m["user:c@example.com"] != 1 {
		t.Fatalf("stored %v", m)
	}
	if strings.Join(order, "") != "abc" {
		t.Fatalf("applied in order %v", order)
	}
	if n := x.sets(); n != 2 {
		t.Fatalf("%d writes, want 2 (the held one, then one batch)", n)
	}
}

func e(x *held) *env { return x.env }

// TestCancelledWhileQueued: a caller whose context ends while it is queued
// leaves the batch at once with its context's error; nothing of it is
// written; the others land.
func TestCancelledWhileQueued(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32 // how often gone's mutation ran
	grant := policy.AddBinding("roles/viewer", "user:gone@example.com")
	gone := x.queue(t, ctx, func(p *iampb.Policy) (bool, error) {
		runs.Add(1)
		return grant(p)
	})
	stays := x.queue(t, context.Background(), policy.AddBinding("roles/viewer", "user:stays@example.com"))
	cancel()
	r := <-gone
	if !errors.Is(r.err, context.Canceled) || status.Code(r.err) != codes.Canceled || !strings.Contains(r.err.Error(), "nothing of this update was written") {
		t.Fatalf("err %v", r.err)
	}
	if policy.Pending(x.u, res) != 1 {
		t.Fatalf("pending %d after the cancelled caller left", policy.Pending(x.u, res))
	}
	x.release()
	if r := <-stays; r.err != nil {
		t.Fatal(r.err)
	}
	<-x.first
	m := members(x.srv.Policy(res), "")
	if m["user:gone@example.com"] != 0 || m["user:stays@example.com"] != 1 {
		t.Fatalf("stored %v", m)
	}
}

// TestCallerLeavesRunningBatch: a caller whose context ends while its batch
// is in flight returns at once; the batch goes on for the others, and its
// reruns leave the departed caller's change out.
func TestCallerLeavesRunningBatch(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	ctx, cancel := context.WithCancel(context.Background())
	hasLeft := make(chan struct{})
	// The batch of "gone" and "stays" meets a conflict on its first write,
	// and "gone" gives up meanwhile.
	x.h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 2 {
			cancel()
			<-hasLeft
			return status.Error(codes.Aborted, "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.")
		}
		return nil
	}
	var runs atomic.Int32 // how often gone's mutation ran
	grant := policy.AddBinding("roles/viewer", "user:gone@example.com")
	gone := x.queue(t, ctx, func(p *iampb.Policy) (bool, error) {
		runs.Add(1)
		return grant(p)
	})
	stays := x.queue(t, context.Background(), policy.AddBinding("roles/viewer", "user:stays@example.com"))
	x.release()
	r := <-gone
	ranBefore := runs.Load()
	close(hasLeft)
	if status.Code(r.err) != codes.Canceled || !strings.Contains(r.err.Error(), "may or may not") {
		t.Fatalf("gone: %v", r.err)
	}
	rs := <-stays
	if rs.err != nil {
		t.Fatal(rs.err)
	}
	<-x.first
	m := members(x.srv.Policy(res), "")
	if m["user:gone@example.com"] != 0 || m["user:stays@example.com"] != 1 || m["user:first@example.com"] != 1 {
		t.Fatalf("stored %v", m)
	}
	if n := runs.Load(); n != ranBefore || n != 1 {
		t.Fatalf("the departed caller's mutation ran %d times, %d before it left", n, ranBefore)
	}
}

// TestBatchSplitsOnRefusal: when the server refuses a coalesced write
// (INVALID_ARGUMENT), each caller's change is tried alone, so only the
// caller to blame fails; a caller whose change needed no write succeeds.
func TestBatchSplitsOnRefusal(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	ctx := context.Background()
	good := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:good@example.com"))
	bad := x.queue(t, ctx, policy.AddBinding("not-a-role", "user:bad@example.com")) // the fake refuses the role
	good2 := x.queue(t, ctx, policy.AddBinding("roles/editor", "user:good@example.com"))
	noop := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:first@example.com")) // done by the held one
	x.release()
	<-x.first
	if r := <-bad; status.Code(r.err) != codes.InvalidArgument || !strings.Contains(r.err.Error(), "not-a-role") {
		t.Fatalf("bad: %v", r.err)
	}
	for _, ch := range []chan result{good, good2, noop} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	m := members(x.srv.Policy(res), "")
	if m["user:good@example.com"] != 2 || m["user:bad@example.com"] != 0 {
		t.Fatalf("stored %v", m)
	}
}

// TestCoalescing50: 50 concurrent Updates through one Updater need at most
// 10 writes, and every change lands once.
func TestCoalescing50(t *testing.T) {
	t.Parallel()
	x := newEnv(t)
	u, _ := updater(t, x.client)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			<-start
			_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", fmt.Sprintf("user:u%d@example.com", i)))
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m := members(x.srv.Policy(res), "roles/viewer"); len(m) != 50 {
		t.Fatalf("%d members", len(m))
	}
	if n := x.sets(); n > 10 {
		t.Fatalf("%d writes for 50 updates, want at most 10", n)
	}
	t.Logf("50 concurrent updates: %d reads, %d writes", x.gets(), x.sets())
}

const (
	stressUpdaters  = 32
	stressMutations = 30
)

func faulty(t *testing.T) *env {
	x := newEnv(t)
	for _, m := range []iamtest.Method{iamtest.MethodGetIamPolicy, iamtest.MethodSetIamPolicy} {
		x.srv.SetFailureRate(m, 0.2, codes.Unavailable, codes.Internal)
	}
	x.srv.SetLostAnswerRate(iamtest.MethodSetIamPolicy, 0.2)
	return x
}

// stress runs stressUpdaters goroutines of stressMutations Updates each,
// through the Updater that pick gives goroutine i, and checks that every
// change landed exactly once and none was reported failed.
//
// With a clock, each goroutine is a thread of clk (clk.Go): their waits
// overlap in virtual time, as separate processes' waits do in real time.
func stress(t *testing.T, x *env, clk *vclock.Clock, pick func(i int) *policy.Updater) {
	errs := make(chan error, stressUpdaters*stressMutations)
	ups := make([]*policy.Updater, stressUpdaters)
	for i := range ups {
		ups[i] = pick(i)
	}
	run := func(ctx context.Context, i int) {
		for j := range stressMutations {
			_, err := ups[i].Update(ctx, res, policy.AddBinding("roles/viewer", fmt.Sprintf("user:u%d-%d@example.com", i, j)))
			if err != nil {
				errs <- fmt.Errorf("updater %d, mutation %d: %w", i, j, err)
			}
		}
	}
	if clk != nil {
		clk.Go(context.Background(), stressUpdaters, func(ctx context.Context, i int) { run(ctx, i-1) })
	} else {
		var wg sync.WaitGroup
		for i := range stressUpdaters {
			wg.Go(func() { run(context.Background(), i) })
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	m := members(x.srv.Policy(res), "")
	for i := range stressUpdaters {
		for j := range stressMutations {
			if n := m[fmt.Sprintf("user:u%d-%d@example.com", i, j)]; n != 1 {
				t.Errorf("u%d-%d granted %d times", i, j, n)
			}
		}
	}
	if len(m) != stressUpdaters*stressMutations {
		t.Errorf("%d members, want %d", len(m), stressUpdaters*stressMutations)
	}
	var lost, aborted int
	for _, c := range x.srv.Calls() {
		if c.Method == iamtest.MethodSetIamPolicy && c.Code == codes.Unavailable && c.Injected {
			lost++
		}
		if c.Code == codes.Aborted {
			aborted++
		}
	}
	t.Logf("%d reads, %d writes (%d failed UNAVAILABLE, lost answers among them), %d conflicts",
		x.gets(), x.sets(), lost, aborted)
}

// TestSeparateUpdatersUnderFaults: 32 Updaters, as 32 processes would be,
// each making 30 changes to one policy under 20% transient faults on reads
// and writes and 20% lost answers: every change lands exactly once.
//
// The 32 contenders are threads of one discrete-event virtual clock: their
// backoffs overlap in virtual time as 32 processes' would in real time, and
// take no real time, so the test's outcome and cost do not depend on how
// busy the machine is. The retry deadline is lifted so that contention
// alone never fails a change (the test pins exactly-once, not the
// deadline).
func TestSeparateUpdatersUnderFaults(t *testing.T) {
	t.Parallel()
	x := faulty(t)
	clk := vclock.New()
	stress(t, x, clk, func(int) *policy.Updater {
		u, err := newUpdater(x.client, interceptor.WithClock(clk), interceptor.WithDeadline(0))
		if err != nil {
			t.Fatal(err)
		}
		return u
	})
}

// TestSharedUpdaterUnderFaults: the same load through one shared Updater,
// which coalesces it. An attempt fails about 36% of the time here, and the
// default 60 s deadline allows 6 attempts (0.36^6: one batch in 500 would
// fail), so the deadline is raised to 10 minutes (about 22 attempts).
func TestSharedUpdaterUnderFaults(t *testing.T) {
	t.Parallel()
	x := faulty(t)
	u, _ := updater(t, x.client, interceptor.WithDeadline(10*time.Minute))
	stress(t, x, nil, func(int) *policy.Updater { return u })
}
