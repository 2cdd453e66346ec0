package policy

import (
	"context"
	"slices"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/codes"
)

// The batching layer: the outer one. Each resource being updated has a
// queue and one committer goroutine. An Update appends a waiter to the
// queue and starts the committer if none runs. The committer takes every
// waiter queued at that moment as one batch, hands the batch's changes to
// the read-modify-write (rmw.go, which knows nothing of this layer), hands
// each waiter its result, and starts over with whatever queued meanwhile;
// it ends, and the queue is dropped, when nothing is queued. So no call
// waits for a timer, a call that arrives during a read-modify-write joins
// the next one, and the number of writes is about the number of times the
// queue went from empty to busy plus the number of batches that followed.
//
// Data flows one way: Update -> queue -> batch -> transact -> outcomes ->
// deliver -> Update. A waiter that leaves withdraws its change (change.go),
// which the read-modify-write reads; nothing else crosses back.

// waiter is one Update call.
type waiter struct {
	ctx  context.Context
	ch   *change
	done chan struct{} // closed once the result fields are set

	// Guarded by Updater.mu.
	batch    *batch // set when the caller's batch starts
	left     bool   // the caller's context ended and it returned
	finished bool   // the result is set

	pol      *iampb.Policy
	err      error
	panicked any  // re-raised in the caller
	goexit   bool // its Mutation called runtime.Goexit: re-raised in the caller
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
}

func (u *Updater) enqueue(resource string, w *waiter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q, running := u.queues[resource]
	if !running {
		q = &queue{}
		u.queues[resource] = q
	}
	q.pending = append(q.pending, w)
	if !running {
		go u.commit(resource, q)
	}
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
	if b == nil {
		if q := u.queues[resource]; q != nil {
			q.pending = slices.DeleteFunc(q.pending, func(x *waiter) bool { return x == w })
		}
		u.mu.Unlock()
		return true, true
	}
	b.live--
	if b.live == 0 {
		b.cancel() // nobody waits for this batch any more
	}
	u.mu.Unlock()
	w.ch.leave()
	return false, true
}

// commit runs batches for resource until its queue is empty.
func (u *Updater) commit(resource string, q *queue) {
	for {
		b := u.next(resource, q)
		if b == nil {
			return
		}
		u.guard(b)
		b.cancel()
	}
}

// guard runs b on a goroutine of its own, so that whatever the Client, an
// observer, a logger or a classifier does (panic, runtime.Goexit), the
// committer survives. The panic is handed to one caller of b, the first
// still waiting, and re-raised in its goroutine; the others go back to the
// head of the queue and run in the next batch (a rerun is safe: mutations
// are idempotent, and the read-modify-write starts from a fresh read).
func (u *Updater) guard(b *batch) {
	done := make(chan struct{})
	var (
		returned bool
		panicked any
	)
	go func() {
		defer func() {
			if !returned {
				panicked = recover()
			}
			close(done)
		}()
		u.run(b)
		returned = true
	}()
	<-done
	if returned {
		return
	}
	o := outcome{panicked: panicked}
	if panicked == nil { // runtime.Goexit outside any Mutation
		o = outcome{err: status.Error(grpccodes.Internal, "iamretry/policy: the read-modify-write's goroutine ended (runtime.Goexit in the Client, an observer, a logger or a classifier)")}
	}
	u.mu.Lock()
	var rest []*waiter
	for _, w := range b.members {
		if !w.left && !w.finished {
			rest = append(rest, w)
		}
	}
	u.mu.Unlock()
	if len(rest) == 0 {
		return
	}
	u.deliver(b.resource, rest[:1], []outcome{o}, nil)
	u.requeue(b.resource, rest[1:])
}

// requeue puts ws back at the head of resource's queue (whose committer is
// the caller), in their order.
func (u *Updater) requeue(resource string, ws []*waiter) {
	u.mu.Lock()
	defer u.mu.Unlock()
	q := u.queues[resource]
	var back []*waiter
	for _, w := range ws {
		if !w.left && !w.finished {
			w.batch = nil
			back = append(back, w)
		}
	}
	q.pending = append(back, q.pending...)
}

// next takes every queued waiter as a batch, or drops the queue and
// returns nil when none is queued.
func (u *Updater) next(resource string, q *queue) *batch {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(q.pending) == 0 {
		delete(u.queues, resource)
		return nil
	}
	b := &batch{resource: resource, members: q.pending, live: len(q.pending)}
	q.pending = nil
	b.ctx, b.cancel = batchContext(b.members)
	b.callers = func() []context.Context { return u.waiting(b) }
	for _, w := range b.members {
		w.batch = b
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
		if !w.left && !w.finished {
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
// conflict), the batch is split: each caller's change is tried alone, in
// arrival order, so that one bad change fails only its caller. A change
// refused because it grants a role to a member IAM cannot see yet is, when
// the Updater waits for such members (the Retrier's 404 opt-in), tried
// again alone after the others, with its reruns: only its caller waits.
func (u *Updater) run(b *batch) {
	changes := make([]*change, len(b.members))
	for i, w := range b.members {
		changes[i] = w.ch
	}
	out, err := u.transact(b.ctx, b.resource, changes, b.callers)
	if err != nil && splittable(err) && len(b.members) > 1 {
		waits := u.r.RetriesNotFound(b.ctx)
		var later []int
		for i := range b.members {
			if changes[i].withdrawn() {
				continue
			}
			o, err := u.try(b.ctx, b.resource, changes[i:i+1], b.callers, waits)
			if waits && notVisible(err) {
				later = append(later, i)
				continue
			}
			u.deliver(b.resource, b.members[i:i+1], o, forCaller(err))
		}
		for _, i := range later {
			if changes[i].withdrawn() {
				continue
			}
			o, err := u.transact(b.ctx, b.resource, changes[i:i+1], b.callers)
			u.deliver(b.resource, b.members[i:i+1], o, err)
		}
		return
	}
	u.deliver(b.resource, b.members, out, err)
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

// deliver hands each caller of ws that still waits its outcome, or err, the
// failure of the whole read-modify-write.
func (u *Updater) deliver(resource string, ws []*waiter, out []outcome, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, w := range ws {
		if w.left || w.finished {
			continue
		}
		var o outcome
		if i < len(out) {
			o = out[i]
		}
		switch {
		case o.panicked != nil:
			w.panicked = o.panicked
		case o.goexit:
			w.goexit = true
		case o.err != nil:
			w.err = wrap(resource, o.err)
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
		close(w.done)
	}
}
