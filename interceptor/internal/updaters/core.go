package updaters

import (
	"context"
	"slices"
	"sync"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// The coalescing core of the three Updaters (allow policies, custom roles,
// deny policies). Concurrent Updates of one object through one Updater
// queue in arrival order; while no batch holds the object, the first caller
// queued leads a batch of itself and the callers queued right behind it
// that may share its write (Key). Everything runs on the callers'
// goroutines: the leader runs the read-modify-write (the package's lead
// function) on its own goroutine and has each member run its change on
// that member's own goroutine (Batch.Apply), in arrival order; then it
// delivers each member's outcome. The Core has no goroutine of its own.
//
// A leader whose context ends returns at once: the batch's context is
// cancelled (its in-flight call with it), and the members still waiting go
// back to the head of the queue, where the first leads a rerun from a fresh
// read. A panic or runtime.Goexit in a member's change ends that member's
// goroutine as it would have without the Core; the leader goes on without
// the member. A panic or runtime.Goexit on the leader's goroutine (its own
// change, the Client, an observer) ends the leader the same way, and the
// other members go back to the queue as above.

// Key is what callers must share to share a write: their context forms and
// their outgoing headers (Headers). Keys compare with ==.
type Key struct {
	forms   formsKey
	headers string
}

// Core coalesces concurrent updates: C is one caller's change, R its
// result.
type Core[C, R any] struct {
	hooks *rmwhook.Run // the Retrier's: Record, RetryNotFound
	mu    sync.Mutex
	objs  map[string]*object[C, R]
}

// object is one object's queue, and the batch holding it (nil: none).
type object[C, R any] struct {
	queue  []*Waiter[C, R]
	holder *Batch[C, R]
}

// Waiter is one Update call.
type Waiter[C, R any] struct {
	ctx    context.Context
	obj    string
	key    Key
	Change C
	wake   chan struct{} // cap 1: something changed in the fields below

	// Guarded by Core.mu.
	batch *Batch[C, R] // the batch it is in; nil while queued
	lead  bool         // it is to lead batch
	task  func()       // a change run asked of it by the leader
	reply chan applied // where the task's end goes
	done  bool         // res, err and end are set
	left  bool         // it returned (its context ended, or a panic)
	solo  bool         // its change goes alone into a batch of its own
	res   R
	err   error
	end   rmwhook.End
	// Retries and Waited are what its change lived through in batches
	// that handed it back (each attempt it was part of, and the waits
	// between them), for its call's record.
	Retries int
	Waited  time.Duration
}

// Context is the waiter's caller's context.
func (w *Waiter[C, R]) Context() context.Context { return w.ctx }

// applied is how a member's run of a task ended.
type applied uint8

const (
	notRun   applied = iota // it left before it took the task
	returned                // the task returned
	failed                  // the task panicked or called runtime.Goexit
)

// NewCore returns a Core for updates run on r.
func NewCore[C, R any](r *interceptor.Retrier) *Core[C, R] {
	return &Core[C, R]{hooks: Hooks(r), objs: map[string]*object[C, R]{}}
}

// Hooks returns what the engine tells a coalesced batch of r: how to
// record a call in r's metrics (nil without any) and whether r retries
// NOT_FOUND on every call.
func Hooks(r *interceptor.Retrier) *rmwhook.Run {
	probe := &rmwhook.Run{Probe: true}
	_, _ = interceptor.Transact(rmwhook.With(context.Background(), probe), r, interceptor.ReadModifyWrite[struct{}]{
		Method: "iamretry.probe",
		Read:   func(context.Context) (struct{}, error) { return struct{}{}, nil },
		Modify: func(v struct{}) (struct{}, bool, error) { return v, false, nil },
		Write:  func(_ context.Context, v struct{}) (struct{}, error) { return v, nil },
		Etag:   func(struct{}) string { return "" },
	})
	return probe
}

// RetriesNotFound reports whether calls made under ctx retry NOT_FOUND
// (the Retrier's opt-in, or RetryNotFoundContext).
func (c *Core[C, R]) RetriesNotFound(ctx context.Context) bool {
	return c.hooks.RetryNotFound || retriesNotFound(ctx)
}

// Record counts one call of method that ended as e, on the caller's
// goroutine (a panic in the MeterProvider is the caller's).
func (c *Core[C, R]) Record(ctx context.Context, method string, e rmwhook.End) {
	if c.hooks.Record != nil {
		c.hooks.Record(ctx, method, e)
	}
}

// Do queues change for obj and returns its result once a batch delivered
// it, leading batches as the Core asks. It returns left true, and no
// result, when ctx ended first (queued: its change was never in a batch).
// lead runs a batch on the caller's goroutine. method names the calls
// recorded: Do records the caller's call once it has its result or has
// left.
func (c *Core[C, R]) Do(ctx context.Context, obj, method string, change C, lead func(*Batch[C, R])) (res R, err error, left, queued bool) {
	w := &Waiter[C, R]{ctx: ctx, obj: obj, key: KeyOf(ctx), Change: change, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	o := c.objs[obj]
	if o == nil {
		o = &object[C, R]{}
		c.objs[obj] = o
	}
	o.queue = append(o.queue, w)
	c.promote(obj)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		switch {
		case w.done:
			c.mu.Unlock()
			c.Record(ctx, method, w.end)
			return w.res, w.err, false, false
		case ctx.Err() != nil:
			// Whatever it was asked to do, it leaves (below).
		case w.lead:
			w.lead = false
			b := w.batch
			c.mu.Unlock()
			c.run(b, lead)
			continue
		case w.task != nil:
			t, reply := w.task, w.reply
			w.task, w.reply = nil, nil
			c.mu.Unlock()
			c.apply(w, t, reply)
			continue
		}
		c.mu.Unlock()
		select {
		case <-w.wake:
		case <-ctx.Done():
			if end, q, ok := c.leave(obj, w); ok {
				c.Record(ctx, method, end)
				return res, nil, true, q
			}
		}
	}
}

// apply runs t, a change the leader asked w to run, and tells the leader
// how it ended. A panic or runtime.Goexit in t goes on up w's goroutine
// (w leaves: it never runs a task or leads again).
func (c *Core[C, R]) apply(w *Waiter[C, R], t func(), reply chan applied) {
	ok := false
	defer func() {
		if !ok {
			c.mu.Lock()
			c.drop(w)
			c.mu.Unlock()
			reply <- failed
		}
	}()
	t()
	ok = true
	reply <- returned
}

// drop takes w out for good: its goroutine ends (a panic or runtime.Goexit
// in its change). Its batch may have been given up meanwhile and w put back
// in the queue, or told to lead the next batch: it leaves the queue, and a
// batch it was to lead goes back to the queue, whose head leads. c.mu must
// be held.
func (c *Core[C, R]) drop(w *Waiter[C, R]) {
	w.left = true
	b := w.batch
	switch {
	case b == nil:
		if o := c.objs[w.obj]; o != nil {
			o.queue = slices.DeleteFunc(o.queue, func(x *Waiter[C, R]) bool { return x == w })
			c.promote(w.obj)
		}
	case w.lead:
		w.lead = false
		b.ended = true
		c.requeue(b, nil)
		c.free(b)
	}
}

// leave takes w out after its context ended: it reports false when w's
// result came first, else how w's call ended and whether w was still
// queued.
func (c *Core[C, R]) leave(obj string, w *Waiter[C, R]) (end rmwhook.End, queued, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.done {
		return end, false, false
	}
	w.left = true
	end = rmwhook.End{Err: w.ctx.Err(), Retries: w.Retries, Waited: w.Waited, Reason: uint8(interceptor.NotRetryable)}
	b := w.batch
	if w.Retries > 0 || (b != nil && b.failed) {
		end.Reason = uint8(interceptor.ContextDone) // it gave up on a failure
	}
	switch {
	case b == nil:
		if o := c.objs[obj]; o != nil {
			o.queue = slices.DeleteFunc(o.queue, func(x *Waiter[C, R]) bool { return x == w })
			c.promote(obj)
		}
		return end, true, true
	case w.task != nil:
		w.task = nil
		w.reply <- notRun
	case w.lead:
		// Told to lead, it never started (nothing of it was sent): the
		// others go back to the queue, whose head leads.
		w.lead = false
		b.ended = true
		c.requeue(b, nil)
		c.free(b)
		return end, true, true
	}
	return end, false, true
}

// promote starts the next batch of obj when none holds it: the first
// caller queued leads itself and the callers queued right behind it that
// share its Key (none when either is solo). It drops obj when nothing is
// queued or held. c.mu must be held.
func (c *Core[C, R]) promote(obj string) {
	o := c.objs[obj]
	if o == nil || o.holder != nil {
		return
	}
	if len(o.queue) == 0 {
		delete(c.objs, obj)
		return
	}
	head := o.queue[0]
	n := 1
	if !head.solo {
		for n < len(o.queue) && !o.queue[n].solo && o.queue[n].key == head.key {
			n++
		}
	}
	b := &Batch[C, R]{core: c, obj: obj, Members: slices.Clone(o.queue[:n])}
	o.queue = slices.Delete(o.queue, 0, n)
	o.holder = b
	for _, w := range b.Members {
		w.batch = b
		w.solo = false
	}
	head.lead = true
	signal(head)
}

func signal[C, R any](w *Waiter[C, R]) {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run runs lead for b on the leader's goroutine, under b's context: the
// values of the leader's context, the latest of the members' deadlines
// (none when one has none), cancelled when the leader's context ends.
func (c *Core[C, R]) run(b *Batch[C, R], lead func(*Batch[C, R])) {
	leader := b.Members[0]
	var own bool
	b.ctx, b.cancel, own = batchContext(b.Members)
	abandon := func() {
		c.mu.Lock()
		b.abandoned = true
		c.mu.Unlock()
		if !own {
			b.cancel()
		}
	}
	// When the batch's context is the leader's own (a lone caller, or a
	// leader whose deadline is the latest), the leader's end ends it at
	// once; else, when the leader's context ends, its cancellation is
	// carried over (context.AfterFunc).
	stop := context.AfterFunc(leader.ctx, abandon)
	ok := false
	defer func() {
		stop()
		b.cancel()
		c.mu.Lock()
		defer c.mu.Unlock()
		b.ended = true
		if !ok {
			leader.left = true // a panic or runtime.Goexit goes on up its goroutine
		}
		if b.gone() || !ok {
			c.requeue(b, leader)
		} else {
			for _, w := range b.Members {
				if b.live(w) {
					w.done = true
					w.err = errNoOutcome
					w.end = rmwhook.End{Err: errNoOutcome, Reason: uint8(interceptor.NotRetryable)}
					signal(w)
				}
			}
		}
		c.free(b)
	}()
	lead(b)
	ok = true
}

// requeue puts b's members still waiting on it, but skip, back at the head
// of the queue, in their order. c.mu must be held.
func (c *Core[C, R]) requeue(b *Batch[C, R], skip *Waiter[C, R]) {
	var back []*Waiter[C, R]
	for _, w := range b.Members {
		if w != skip && b.live(w) {
			w.batch = nil
			w.lead = false
			if w.task != nil { // asked by b's leader, never taken: b is over
				w.task = nil
				w.reply <- notRun
			}
			back = append(back, w)
		}
	}
	c.pushFront(b.obj, back)
}

func (c *Core[C, R]) pushFront(obj string, ws []*Waiter[C, R]) {
	if len(ws) == 0 {
		return
	}
	o := c.objs[obj]
	if o == nil {
		o = &object[C, R]{}
		c.objs[obj] = o
	}
	o.queue = append(slices.Clone(ws), o.queue...)
}

// free lets go of b's object, if b holds it, and starts the next batch.
// c.mu must be held.
func (c *Core[C, R]) free(b *Batch[C, R]) {
	if o := c.objs[b.obj]; o != nil && o.holder == b {
		o.holder = nil
	}
	c.promote(b.obj)
}

// batchContext is the context a batch runs under: the values of its
// leader's context, and the latest of the members' deadlines (none when
// one has none), so that no member's wait is cut short by another's
// deadline. own: it is a child of the leader's context (the leader's
// deadline is the latest, or it has none), which ends it; else it is
// detached from the leader's cancellation, which run carries over.
func batchContext[C, R any](ws []*Waiter[C, R]) (ctx context.Context, cancel context.CancelFunc, own bool) {
	leader := ws[0].ctx
	ldl, lok := leader.Deadline()
	var latest time.Time
	none := false
	for _, w := range ws {
		dl, ok := w.ctx.Deadline()
		if !ok {
			none = true
			continue
		}
		if dl.After(latest) {
			latest = dl
		}
	}
	if !lok || (!none && !latest.After(ldl)) {
		ctx, cancel = context.WithCancel(leader)
		return ctx, cancel, true
	}
	base := context.WithoutCancel(leader)
	if none {
		ctx, cancel = context.WithCancel(base)
		return ctx, cancel, false
	}
	ctx, cancel = context.WithDeadline(base, latest)
	return ctx, cancel, false
}

// Pending returns how many callers of obj are queued, not in a batch (for
// tests).
func (c *Core[C, R]) Pending(obj string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.objs[obj]; o != nil {
		return len(o.queue)
	}
	return 0
}

// Busy reports whether a batch of obj runs or callers of it are queued
// (for tests).
func (c *Core[C, R]) Busy(obj string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.objs[obj]
	return ok
}

// Batch is the callers of one read-modify-write, led by Members[0] on its
// goroutine.
type Batch[C, R any] struct {
	core    *Core[C, R]
	obj     string
	Members []*Waiter[C, R] // in arrival order; Members[0] leads
	ctx     context.Context
	cancel  context.CancelFunc

	// Guarded by Core.mu.
	abandoned bool // the leader's context ended: deliver nothing
	ended     bool // the lead function returned
	failed    bool // a call of the batch failed (Fail)
}

// Context is the context the batch's calls run under.
func (b *Batch[C, R]) Context() context.Context { return b.ctx }

// Object is the name of the object the batch updates.
func (b *Batch[C, R]) Object() string { return b.obj }

// gone reports whether b's leader has left (its context ended): nothing is
// delivered, and the members go back to the queue.
func (b *Batch[C, R]) gone() bool {
	return b.abandoned || b.Members[0].ctx.Err() != nil
}

// live reports whether w still waits on b. Core.mu must be held.
func (b *Batch[C, R]) live(w *Waiter[C, R]) bool {
	return w.batch == b && !w.left && !w.done
}

// Live reports whether member i still waits on b: it has not left, has no
// result, and was not handed back.
func (b *Batch[C, R]) Live(i int) bool {
	b.core.mu.Lock()
	defer b.core.mu.Unlock()
	return b.live(b.Members[i]) && !b.gone()
}

// Callers returns the contexts of the members still waiting on b.
func (b *Batch[C, R]) Callers() []context.Context {
	b.core.mu.Lock()
	defer b.core.mu.Unlock()
	var ctxs []context.Context
	for _, w := range b.Members {
		if b.live(w) {
			ctxs = append(ctxs, w.ctx)
		}
	}
	return ctxs
}

// Fail notes that a call of the batch failed: a member whose context ends
// after that gave up on a failure.
func (b *Batch[C, R]) Fail() {
	b.core.mu.Lock()
	b.failed = true
	b.core.mu.Unlock()
}

// Apply runs f, member i's change, on member i's goroutine (the leader's
// own inline), and waits for it. It reports whether f ran to its end
// (returned); false: the member left before (nothing ran), or f panicked
// or called runtime.Goexit, which went on up the member's goroutine (the
// leader's own go on up the leader's). It also returns false at once when
// the batch's context ends meanwhile.
func (b *Batch[C, R]) Apply(i int, f func()) (ok bool) {
	w := b.Members[i]
	if i == 0 {
		f()
		return true
	}
	reply := make(chan applied, 1)
	b.core.mu.Lock()
	if !b.live(w) || b.gone() {
		b.core.mu.Unlock()
		return false
	}
	w.task, w.reply = f, reply
	signal(w)
	b.core.mu.Unlock()
	select {
	case a := <-reply:
		return a == returned
	case <-b.ctx.Done():
		return false
	}
}

// Deliver hands member i, if it still waits on b, its result (err nil) or
// error, with how its call ended for the metrics. Once the leader's
// context has ended only the leader gets its outcome (the error its
// context's end made, say): the other members go back to the queue.
func (b *Batch[C, R]) Deliver(i int, res R, err error, end rmwhook.End) {
	b.core.mu.Lock()
	defer b.core.mu.Unlock()
	w := b.Members[i]
	if !b.live(w) || (i > 0 && b.gone()) {
		return
	}
	w.done, w.res, w.err, w.end = true, res, err, end
	signal(w)
}

// Handback takes members is out of b and puts them back at the head of the
// queue, in their order (solo: each to run alone), each carrying retries
// more attempts and waited more waiting to its call's record. They run
// once b lets go of the object (Release, or the lead function's end).
func (b *Batch[C, R]) Handback(is []int, solo bool, retries int, waited time.Duration) {
	b.core.mu.Lock()
	defer b.core.mu.Unlock()
	if b.gone() {
		return
	}
	var back []*Waiter[C, R]
	for _, i := range is {
		w := b.Members[i]
		if !b.live(w) {
			continue
		}
		w.batch = nil
		w.solo = solo
		w.Retries += retries
		w.Waited += waited
		back = append(back, w)
	}
	b.core.pushFront(b.obj, back)
	b.core.promote(b.obj) // nothing while a batch holds the object
}

// Release lets go of b's object while b goes on (its members waiting for a
// member to become visible): the next batch starts at once.
func (b *Batch[C, R]) Release() {
	b.core.mu.Lock()
	defer b.core.mu.Unlock()
	b.core.free(b)
}

// errNoOutcome is what a member gets when its batch's lead function
// returned without delivering to it: it cannot happen; fail loudly rather
// than leave the caller waiting.
var errNoOutcome = status.Error(grpccodes.Internal, "iamretry: the batch of this update ended without an outcome for it")

// Splittable reports whether err, the failure of a batch's read-modify-write,
// may be one member's doing (INVALID_ARGUMENT, or a FAILED_PRECONDITION that
// was no conflict): then each member's change is tried alone (Handback
// solo), so that only the guilty caller fails.
func Splittable(err error) bool {
	if codes.OfError(err) != codes.Permanent {
		return false
	}
	switch codes.CodeOf(err) { // a REST error's own code, not gax's guess from the HTTP status
	case grpccodes.InvalidArgument, grpccodes.FailedPrecondition:
		return true
	}
	return false
}

// Ended is how a member's call ended, its result e (nil: it succeeded) set
// after the read-modify-write that ended as end: the attempts its change
// made and the waits between them in every batch it was part of (retries
// and waited: those that handed it back, Waiter.Retries and Waiter.Waited),
// and end's Reason unless it succeeded or failed on its own (its change's
// error, a limit: own).
func Ended(retries int, waited time.Duration, end rmwhook.End, e error, own bool) rmwhook.End {
	x := rmwhook.End{Err: e, Retries: retries + end.Retries, Waited: waited + end.Waited, Reason: end.Reason}
	switch {
	case e == nil:
		x.Reason = uint8(interceptor.Succeeded)
	case own, x.Reason == uint8(interceptor.Retry): // Retry: no end was given
		x.Reason = uint8(interceptor.NotRetryable)
	}
	return x
}
