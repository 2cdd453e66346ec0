package policy_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/googleapis/gax-go/v2/callctx"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestMutationRunsOnItsCallersGoroutine: each caller's Mutation runs on
// that caller's own goroutine (its stack shows the caller), also when its
// Update is coalesced with others; a panic in it is recovered by its own
// caller, and its batch-mates succeed.
func TestMutationRunsOnItsCallersGoroutine(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	var mu sync.Mutex
	shown := map[string]bool{}
	grant := func(name string, boom bool) policy.Mutation {
		return func(p *iampb.Policy) (bool, error) {
			mu.Lock()
			shown[name] = stackHas("policy_test.caller.func1") // caller's goroutine runs Update
			mu.Unlock()
			if boom {
				panic("boom " + name)
			}
			return policy.AddBinding("roles/viewer", "user:"+name+"@example.com")(p)
		}
	}
	a := x.queueAny(t, context.Background(), grant("a", false))
	b := x.queueAny(t, context.Background(), grant("b", true))
	c := x.queueAny(t, context.Background(), grant("c", false))
	x.release()
	if r := <-x.first; r.err != nil {
		t.Fatal(r.err)
	}
	for name, ch := range map[string]chan any{"a": a, "b": b, "c": c} {
		r := <-ch
		if name == "b" {
			if r != "panic: boom b" {
				t.Errorf("b: %v, want its Mutation's panic", r)
			}
		} else if res, ok := r.(result); !ok || res.err != nil {
			t.Errorf("%s: %v", name, r)
		}
		mu.Lock()
		ok := shown[name]
		mu.Unlock()
		if !ok {
			t.Errorf("%s: its Mutation's stack does not show its caller", name)
		}
	}
	if n := x.sets(); n != 2 {
		t.Errorf("%d writes, want 2 (the first caller's, then a and c coalesced)", n)
	}
}

// stackHas reports whether the calling goroutine's stack holds a frame of
// the function fn (package-qualified, as runtime.Frame.Function ends).
func stackHas(fn string) bool {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// libraryGoroutines returns the stacks of the goroutines that the library
// (package interceptor and those under it, tests aside) started.
func libraryGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		_, by, ok := strings.Cut(g, "\ncreated by ")
		if !ok {
			continue
		}
		fn, _, _ := strings.Cut(by, " ")
		pkg := fn
		if i := strings.LastIndexByte(fn, '/'); i >= 0 {
			if j := strings.IndexByte(fn[i:], '.'); j >= 0 {
				pkg = fn[:i+j]
			}
		}
		if strings.HasPrefix(pkg, "github.com/iamretry/iamretry/interceptor") && !strings.HasSuffix(pkg, "_test") {
			out = append(out, g)
		}
	}
	return out
}

// TestNoUpdaterGoroutine: while a coalesced batch reads, runs its callers'
// Mutations and writes, no goroutine of the Updater's own exists: the
// batch runs on its callers' goroutines.
func TestNoUpdaterGoroutine(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	var mu sync.Mutex
	var found []string
	check := func(where string) {
		if gs := libraryGoroutines(); len(gs) > 0 {
			mu.Lock()
			found = append(found, where+":\n"+strings.Join(gs, "\n\n"))
			mu.Unlock()
		}
	}
	x.h.beforeGet2 = func(int) error { check("read"); return nil }
	x.h.beforeSet = func(context.Context, int, *iampb.SetIamPolicyRequest) error { check("write"); return nil }
	mut := func(name string) policy.Mutation {
		return func(p *iampb.Policy) (bool, error) {
			check("mutation " + name)
			return policy.AddBinding("roles/viewer", "user:"+name+"@example.com")(p)
		}
	}
	a := x.queue(t, context.Background(), mut("a"))
	b := x.queue(t, context.Background(), mut("b"))
	x.release()
	for _, ch := range []chan result{x.first, a, b} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if n := x.sets(); n != 2 {
		t.Errorf("%d writes, want 2", n)
	}
	for _, f := range found {
		t.Errorf("a goroutine of the library's own during the %s", f)
	}
}

// TestCallersWithDifferentHeadersNeverShareAWrite: callers whose outgoing
// headers (gRPC outgoing metadata, gax callctx headers) differ are never in
// one batch: each write carries only changes of callers whose headers are
// those the write is sent with.
func TestCallersWithDifferentHeadersNeverShareAWrite(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	type write struct {
		headers string
		added   []string
	}
	var (
		mu     sync.Mutex
		writes []write
		had    = map[string]bool{}
	)
	x.h.beforeSet = func(ctx context.Context, _ int, req *iampb.SetIamPolicyRequest) error {
		mu.Lock()
		defer mu.Unlock()
		w := write{headers: headersOf(ctx)}
		for m := range members(req.GetPolicy(), "") {
			if !had[m] {
				had[m] = true
				w.added = append(w.added, m)
			}
		}
		writes = append(writes, w)
		return nil
	}
	md := func(project string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "x-goog-user-project", project)
	}
	callers := []struct {
		name string
		ctx  context.Context
	}{
		{"a", md("proj-b")},
		{"b", md("proj-c")},
		{"c", md("proj-b")},
		{"d", callctx.SetHeaders(context.Background(), "x-goog-user-project", "proj-d")},
		{"e", context.Background()},
		{"f", context.Background()},
	}
	want := map[string]string{} // member -> the headers of its caller
	var chs []chan result
	for _, c := range callers {
		member := "user:" + c.name + "@example.com"
		want[member] = headersOf(c.ctx)
		chs = append(chs, x.queue(t, c.ctx, policy.AddBinding("roles/viewer", member)))
	}
	x.release()
	for _, ch := range append([]chan result{x.first}, chs...) {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	want["user:first@example.com"] = ""
	for _, w := range writes {
		for _, m := range w.added {
			if want[m] != w.headers {
				t.Errorf("%s (its caller's headers %q) written with headers %q, with %v", m, want[m], w.headers, w.added)
			}
		}
	}
	if len(writes) != 6 { // first; a; b; c; d; e and f together
		t.Errorf("%d writes, want 6: %+v", len(writes), writes)
	}
}

// headersOf is what a call made under ctx sends as x-goog-user-project.
func headersOf(ctx context.Context) string {
	var hs []string
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		hs = append(hs, md.Get("x-goog-user-project")...)
	}
	hs = append(hs, callctx.HeadersFromContext(ctx)["x-goog-user-project"]...)
	return strings.Join(hs, ",")
}

// TestLeaderLeavesAtOnce: the caller that leads a batch returns at once
// when its context ends: the batch's in-flight call is cancelled, and the
// member still waiting leads a rerun from a fresh read, without the
// departed caller's change.
func TestLeaderLeavesAtOnce(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	writing := make(chan struct{})
	x.h.beforeSet = func(ctx context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 2 { // the write of the batch of "leader" and "member"
			close(writing)
			<-ctx.Done() // returns only when the call is cancelled
			return ctx.Err()
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:leader@example.com"))
	member := x.queue(t, context.Background(), policy.AddBinding("roles/viewer", "user:member@example.com"))
	x.release()
	<-writing
	reads := x.h.ngets.Load()
	cancel()
	if r := <-leader; status.Code(r.err) != codes.Canceled || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("leader: %v", r.err)
	}
	if r := <-member; r.err != nil {
		t.Fatalf("member: %v", r.err)
	}
	if r := <-x.first; r.err != nil {
		t.Fatal(r.err)
	}
	if x.h.ngets.Load() <= reads {
		t.Error("the member's rerun made no fresh read")
	}
	m := members(x.srv.Policy(res), "")
	if m["user:leader@example.com"] != 0 || m["user:member@example.com"] != 1 {
		t.Fatalf("stored %v", m)
	}
}

// TestPanicAfterTheLeaderLeft: a member whose Mutation is running when its
// leader leaves is put back in the queue, at its head (it is to lead the
// rerun); when that Mutation then panics, the panic reaches its caller and
// the next member leads the rerun: nobody is left waiting.
func TestPanicAfterTheLeaderLeft(t *testing.T) {
	t.Parallel()
	x := holdFirstRead(t)
	inM, goM := make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leader := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:leader@example.com"))
	var once sync.Once
	m := x.queueAny(t, context.Background(), func(*iampb.Policy) (bool, error) {
		once.Do(func() { close(inM) })
		<-goM
		panic("boom m")
	})
	n := x.queue(t, context.Background(), policy.AddBinding("roles/viewer", "user:n@example.com"))
	x.release()
	<-inM
	cancel()
	if r := <-leader; status.Code(r.err) != codes.Canceled {
		t.Fatalf("leader: %v", r.err)
	}
	close(goM)
	if r := <-m; r != "panic: boom m" {
		t.Fatalf("m: %v", r)
	}
	if r := <-n; r.err != nil {
		t.Fatalf("n: %v", r.err)
	}
	if r := <-x.first; r.err != nil {
		t.Fatal(r.err)
	}
	if got := members(x.srv.Policy(res), ""); got["user:n@example.com"] != 1 || got["user:leader@example.com"] != 0 {
		t.Fatalf("stored %v", got)
	}
}
