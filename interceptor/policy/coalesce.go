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
)

// Group commit. Each resource being updated has a queue and one committer
// goroutine. An Update appends a waiter to the queue and starts the
// committer if none runs. The committer takes every waiter queued at that
// moment as one batch, runs the batch's read-modify-write, hands each
// waiter its result, and starts over with whatever queued meanwhile; it
// ends, and the queue is dropped, when nothing is queued. So no call waits
// for a timer, a call that arrives during a read-modify-write joins the
// next one, and the number of writes is about the number of times the
// queue went from empty to busy plus the number of batches that followed.

// waiter is one Update call.
type waiter struct {
	ctx  context.Context
	muts []Mutation
	done chan struct{} // closed once pol, err and panicked are set

	// Guarded by Updater.mu.
	batch    *batch // set when the caller's batch starts
	left     bool   // the caller's context ended and it returned
	finished bool   // the result is set

	pol      *iampb.Policy
	err      error
	panicked any
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
	// applying is held while an attempt applies the members' mutations, so
	// that a caller that leaves returns only once its mutations have stopped
	// running, never to run again.
	applying sync.Mutex
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
// whether w was still queued.
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
	// Wait out an application of the mutations under way: w's may be
	// running. Later attempts see w.left and skip them.
	b.applying.Lock()
	b.applying.Unlock() // an empty critical section on purpose: a barrier
	return false, true
}

// live reports which of ws are still waiting.
func (u *Updater) live(ws []*waiter) []bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	l := make([]bool, len(ws))
	for i, w := range ws {
		l[i] = !w.left
	}
	return l
}

// commit runs batches for resource until its queue is empty.
func (u *Updater) commit(resource string, q *queue) {
	for {
		b := u.next(resource, q)
		if b == nil {
			return
		}
		u.run(b)
		b.cancel()
	}
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
	for _, w := range b.members {
		w.batch = b
	}
	return b
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
// arrival order, so that one bad change fails only its caller.
func (u *Updater) run(b *batch) {
	out, err := u.transact(b, b.members)
	if err != nil && splittable(err) && len(b.members) > 1 {
		for _, w := range b.members {
			one := []*waiter{w}
			if !u.live(one)[0] {
				continue
			}
			o, err := u.transact(b, one)
			u.deliver(b.resource, one, o, err)
		}
		return
	}
	u.deliver(b.resource, b.members, out, err)
}

func splittable(err error) bool {
	if codes.OfError(err) != codes.Permanent {
		return false
	}
	switch status.Code(err) {
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
