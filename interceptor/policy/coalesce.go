package policy

import (
	"context"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/ctxforms"
)

// The batching layer: the outer one. Each resource being updated has a
// queue and one committer goroutine. An Update appends a waiter to the
// queue and starts the committer if none runs. The committer takes every
// waiter queued at that moment as one batch (a waiter marked solo, from a
// split batch, alone), hands the batch's changes to the read-modify-write
// (rmw.go, which knows nothing of this layer), hands each waiter its
// result, and starts over with whatever queued meanwhile;
// it ends, and the queue is dropped, when nothing is queued. So no call
// waits for a timer, a call that arrives during a read-modify-write joins
// the next one, and the number of writes is about the number of times the
// queue went from empty to busy plus the number of batches that followed.
//
// Data flows one way: Update -> queue -> batch -> transact -> outcomes ->
// deliver -> Update. A waiter that leaves withdraws its change (change.go),
// which the read-modify-write reads. One thing crosses back: a write refused
// because a member it grants is not visible to IAM yet hands the batch's
// other changes back to the head of the queue (rmw.hand, handBack) and
// releases the committer, while the batch's read-modify-write goes on, on
// its own goroutine, with the changes that grant the member: they wait for
// it (the 404 opt-in) and nobody waits behind them.

// waiter is one Update call.
type waiter struct {
	ctx  context.Context
	ch   *change
	done chan struct{} // closed once the result fields are set

	// Guarded by Updater.mu.
	batch    *batch // set when the caller's batch starts
	left     bool   // the caller's context ended and it returned
	finished bool   // the result is set
	// solo: the caller's change goes alone into a batch of its own (a
	// batch the server refused is split so).
	solo bool

	pol      *iampb.Policy
	err      error
	panicked any  // re-raised in the caller
	goexit   bool // its Mutation called runtime.Goexit: re-raised in the caller

	// retries and waited are what the caller lived through in the batches
	// that handed it back (each attempt its change failed in, and the waits
	// between them), for its call's record (count).
	retries int
	waited  time.Duration
}

// queue holds the waiters of one resource not yet in a batch.
type queue struct {
	pending []*waiter
}

// batch is the callers of one read-modify-write.
type batch struct {
	resource string
	members  []*waiter
	ctx      context.Context
	cancel   context.CancelFunc
	live     int // members that have not left; guarded by Updater.mu
	// callers returns the contexts of the members still waiting: the
	// engine adds the batch's span events to each one's span.
	callers func() []context.Context
	// released is closed when the committer may start the next batch: when
	// the batch has ended, or when what is left of it waits for a member to
	// become visible (it then ends on its own).
	released chan struct{}
	release  func()
	// t is the batch's read-modify-write once it runs; guarded by
	// Updater.mu.
	t *rmw
}

func (u *Updater) enqueue(resource string, w *waiter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := u.queueLocked(resource)
	q.pending = append(q.pending, w)
}

// queueLocked returns resource's queue, and starts its committer when none
// runs. u.mu must be held; the committer takes the first batch once the
// caller has queued and let go of it.
func (u *Updater) queueLocked(resource string) *queue {
	q, running := u.queues[resource]
	if !running {
		q = &queue{}
		u.queues[resource] = q
		go u.commit(resource, q)
	}
	return q
}

// leave takes w out of its queue or batch after its context ended. It
// reports false when w's result is already set (then w keeps it), and
// whether w was still queued. It returns at once, unless w's own mutations
// are running (then as soon as they return): they never run again.
func (u *Updater) leave(resource string, w *waiter) (queued, ok bool) {
	u.mu.Lock()
	if w.finished {
		u.mu.Unlock()
		return false, false
	}
	w.left = true
	b := w.batch
	end := leftEnd(w, b)
	// The call is recorded once u.mu is let go: a panic in the
	// MeterProvider reaches the caller and holds nobody else.
	defer u.r.RecordCall(w.ctx, UpdateMethod, end)
	if b == nil {
		if q := u.queues[resource]; q != nil {
			q.pending = slices.DeleteFunc(q.pending, func(x *waiter) bool { return x == w })
		}
		u.mu.Unlock()
		return true, true
	}
	u.drop(b)
	u.mu.Unlock()
	w.ch.leave()
	return false, true
}

// leftEnd is how the call of w ended, whose caller gave up (its context
// ended) while w's change was queued (b nil) or in b: with the context's
// code, and as a give-up (ContextDone) when the change had met a failure,
// here or in a batch that handed it back. u.mu must be held.
func leftEnd(w *waiter, b *batch) interceptor.CallEnd {
	reason := interceptor.NotRetryable
	if w.retries > 0 || (b != nil && b.t != nil && b.t.failed.Load()) {
		reason = interceptor.ContextDone
	}
	return interceptor.CallEnd{Err: w.ctx.Err(), Retries: w.retries, Waited: w.waited, Reason: reason}
}

// drop counts one member fewer waiting on b (it left, or went back to the
// queue), and cancels b once none waits. u.mu must be held.
func (u *Updater) drop(b *batch) {
	b.live--
	if b.live == 0 {
		b.cancel() // nobody waits for this batch any more
	}
}

// commit runs batches for resource until its queue is empty.
func (u *Updater) commit(resource string, q *queue) {
	for {
		b := u.next(resource, q)
		if b == nil {
			return
		}
		u.guard(b)
	}
}

// guard runs b on a goroutine of its own, so that whatever the Client, an
// observer, a logger or a classifier does (panic, runtime.Goexit), the
// committer survives, and returns once b is released: ended, or left
// waiting for a member to become visible. The panic is handed to one caller
// of b, the first still waiting, and re-raised in its goroutine; the others
// go back to the head of the queue and run in the next batch (a rerun is
// safe: mutations are idempotent, and the read-modify-write starts from a
// fresh read).
func (u *Updater) guard(b *batch) {
	go func() {
		returned := false
		defer func() {
			if !returned {
				u.rescue(b, recover())
			}
			b.cancel()
			b.release()
		}()
		u.run(b)
		returned = true
	}()
	<-b.released
}

// rescue hands the panic (nil: runtime.Goexit) that ended b's goroutine to
// b's first caller still waiting, and puts the others back in the queue.
func (u *Updater) rescue(b *batch, panicked any) {
	o := outcome{panicked: panicked}
	if panicked == nil { // runtime.Goexit outside any Mutation
		o = outcome{err: status.Error(grpccodes.Internal, "iamretry/policy: the read-modify-write's goroutine ended (runtime.Goexit in the Client, an observer, a logger or a classifier)")}
	}
	u.mu.Lock()
	var rest []*waiter
	for _, w := range b.members {
		if w.batch == b && !w.left && !w.finished {
			rest = append(rest, w)
		}
	}
	u.mu.Unlock()
	if len(rest) == 0 {
		return
	}
	var end interceptor.CallEnd // what the callers lived through in b
	if t := b.t; t != nil {
		end.Retries, end.Waited = max(t.attempts-1, 0), t.waited
	}
	u.deliver(b, rest[:1], []outcome{o}, nil, end)
	u.handBack(b, rest[1:], false, end.Retries+1, end.Waited)
}

// handBack takes ws out of b and puts them back at the head of b's
// resource's queue, in their order (solo: each to run alone), starting a
// committer when none runs. Each caller's call carries retries (the
// attempts its change failed in b: the next one is a retry) and waited
// (the waits between them) to its record.
func (u *Updater) handBack(b *batch, ws []*waiter, solo bool, retries int, waited time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var back []*waiter
	for _, w := range ws {
		if w.batch == b && !w.left && !w.finished {
			w.batch = nil
			w.solo = solo
			w.retries += retries
			w.waited += waited
			back = append(back, w)
			u.drop(b)
		}
	}
	if len(back) > 0 {
		q := u.queueLocked(b.resource)
		q.pending = append(back, q.pending...)
	}
}

// next takes the queued waiters as a batch: the first alone when it is
// solo, else every one up to the first solo one or the first whose context
// forms (DisableContext, RetryNotFoundContext, DeadlineContext,
// MaxAttemptsContext) differ from the first's: the batch runs under its
// first caller's context values, so it holds only callers that asked the
// same; or it drops the queue and returns nil when none is queued.
func (u *Updater) next(resource string, q *queue) *batch {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(q.pending) == 0 {
		delete(u.queues, resource)
		return nil
	}
	n := 1
	if first := q.pending[0]; !first.solo {
		forms := ctxforms.Of(first.ctx)
		for n < len(q.pending) && !q.pending[n].solo && ctxforms.Of(q.pending[n].ctx) == forms {
			n++
		}
	}
	b := &batch{resource: resource, members: slices.Clone(q.pending[:n]), live: n, released: make(chan struct{})}
	b.release = sync.OnceFunc(func() { close(b.released) })
	q.pending = slices.Delete(q.pending, 0, n)
	b.ctx, b.cancel = batchContext(b.members)
	b.callers = func() []context.Context { return u.waiting(b) }
	for _, w := range b.members {
		w.batch = b
		w.solo = false
	}
	return b
}

// waiting returns the contexts of b's callers still waiting on it: the
// engine adds the batch's span events to each one's span.
func (u *Updater) waiting(b *batch) []context.Context {
	u.mu.Lock()
	defer u.mu.Unlock()
	var ctxs []context.Context
	for _, w := range b.members {
		if w.batch == b && !w.left && !w.finished {
			ctxs = append(ctxs, w.ctx)
		}
	}
	return ctxs
}

// batchContext is the context a batch runs under: the values of its first
// caller's context, without its cancellation; the latest of the callers'
// deadlines (none when a caller has none), so that the Retrier starts no
// wait that every caller would give up during; cancelled by leave when the
// last caller gives up.
func batchContext(ws []*waiter) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ws[0].ctx)
	var latest time.Time
	for _, w := range ws {
		dl, ok := w.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if dl.After(latest) {
			latest = dl
		}
	}
	return context.WithDeadline(base, latest)
}

// run runs b's read-modify-write and hands out the results. When the
// read-modify-write of several callers fails for a reason that one of them
// may be to blame for (INVALID_ARGUMENT, a FAILED_PRECONDITION that was no
// conflict), the batch is split: each caller's change goes back to the head
// of the queue to be tried alone, in arrival order, so that one bad change
// fails only its caller. A write refused because it grants a role to a
// member IAM cannot see yet is not split so: the refusal names the member,
// the changes that do not grant it go back to the head of the queue at once
// (rmw.hand), and the committer is released; b's read-modify-write goes on
// with the changes that grant it, which wait for it when the Updater does
// (the Retrier's 404 opt-in) on this goroutine, holding nobody else.
func (u *Updater) run(b *batch) {
	changes := make([]*change, len(b.members))
	for i, w := range b.members {
		changes[i] = w.ch
	}
	t := &rmw{c: u.c, resource: b.resource, changes: changes}
	t.hand = func(others []int) {
		ws := make([]*waiter, len(others))
		for k, i := range others {
			ws[k] = b.members[i]
		}
		u.handBack(b, ws, false, t.attempts, t.waited) // every attempt so far failed
		b.release()
	}
	u.mu.Lock()
	b.t = t
	u.mu.Unlock()
	out, err := u.transact(b.ctx, t, b.callers)
	if err != nil && splittable(err) && !refusedForVisibility(err) {
		var mine []*waiter
		for i, w := range b.members {
			if t.mine(i) {
				mine = append(mine, w)
			}
		}
		if len(mine) > 1 {
			// The refused write was an attempt of each change: the
			// change's solo run is its retry, not a call of its own.
			u.handBack(b, mine, true, t.end.Retries+1, t.end.Waited)
			return
		}
	}
	u.deliver(b, b.members, out, err, t.end)
}

func splittable(err error) bool {
	if codes.OfError(err) != codes.Permanent {
		return false
	}
	switch codes.CodeOf(err) { // a REST error's own code, not gax's guess from the HTTP status
	case grpccodes.InvalidArgument, grpccodes.FailedPrecondition:
		return true
	}
	return false
}

// deliver hands each caller of ws that still waits on b its outcome, or
// err, the failure of the whole read-modify-write, and records each one's
// call (count): end is how b's read-modify-write ended.
func (u *Updater) deliver(b *batch, ws []*waiter, out []outcome, err error, end interceptor.CallEnd) {
	resource := b.resource
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, w := range ws {
		if w.batch != b || w.left || w.finished {
			continue
		}
		var o outcome
		if i < len(out) {
			o = out[i]
		}
		own := false
		switch {
		case o.panicked != nil:
			w.panicked = o.panicked
		case o.goexit:
			w.goexit = true
		case o.err != nil:
			w.err = wrap(resource, o.err)
			own = true
		case err != nil:
			w.err = wrap(resource, err)
		case o.pol != nil:
			w.pol = proto.Clone(o.pol).(*iampb.Policy)
		default:
			// Cannot happen: a live caller of a successful attempt has a
			// policy or an error. Fail loudly rather than return nil, nil.
			w.err = wrap(resource, status.Error(grpccodes.Internal, "iamretry/policy: no outcome for this update"))
		}
		w.finished = true
		if w.panicked == nil && !w.goexit { // a panic is re-raised, not counted
			// Before the caller has its result: its call is counted
			// when Update returns. A panic in the MeterProvider is
			// this caller's (it must not leave it waiting).
			if p := u.record(w.ctx, w.ended(end, own)); p != nil {
				w.panicked, w.pol, w.err = p, nil, nil
			}
		}
		close(w.done)
	}
}

// record records a call that ended as e, and returns what the
// MeterProvider panicked with while doing so (nil: it did not).
func (u *Updater) record(ctx context.Context, e interceptor.CallEnd) (panicked any) {
	defer func() { panicked = recover() }()
	u.r.RecordCall(ctx, UpdateMethod, e)
	return nil
}

// ended is how w's call ended, its result set after the read-modify-write
// that ended as end: with the error Update returns, the attempts its change
// made and the waits between them in every batch it was part of, and end's
// Reason unless w succeeded or failed on its own (its Mutation, the limit:
// own). u.mu must be held.
func (w *waiter) ended(end interceptor.CallEnd, own bool) interceptor.CallEnd {
	e := interceptor.CallEnd{Err: w.err, Retries: w.retries + end.Retries, Waited: w.waited + end.Waited, Reason: end.Reason}
	switch {
	case w.err == nil:
		e.Reason = interceptor.Succeeded
	case own, e.Reason == interceptor.Retry: // Retry: no end was given (a panic)
		e.Reason = interceptor.NotRetryable
	}
	return e
}
