package policy

import (
	"cloud.google.com/go/iam/apiv1/iampb"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// The batching is the Updaters' shared core (interceptor/internal/updaters):
// concurrent Updates of one resource queue, and the first queued leads a
// batch of the callers queued behind it that may share its write, on its own
// goroutine; each caller's mutations run on that caller's goroutine. What is
// the policy's own is here: lead runs one batch's read-modify-write (rmw.go)
// and hands each caller its outcome.
//
// One thing crosses back during the read-modify-write: a write refused
// because a member it grants is not visible to IAM yet hands the batch's
// other changes back to the head of the queue and lets go of the resource
// (rmw.hand), while the batch's read-modify-write goes on with the changes
// that grant the member: they wait for it (the 404 opt-in) and nobody waits
// behind them.

// batch is one coalesced batch of policy Updates.
type batch = updaters.Batch[[]Mutation, *iampb.Policy]

// lead runs b's read-modify-write on the leader's goroutine and hands out
// the results. When the read-modify-write of several callers fails for a
// reason that one of them may be to blame for (INVALID_ARGUMENT, a
// FAILED_PRECONDITION that was no conflict), the batch is split: each
// caller's change goes back to the head of the queue to be tried alone, in
// arrival order, so that one bad change fails only its caller. A write
// refused because it grants a role to a member IAM cannot see yet is not
// split so: the refusal names the member, the changes that do not grant it
// go back to the head of the queue at once (rmw.hand), and the resource is
// let go; b's read-modify-write goes on with the changes that grant it.
func (u *Updater) lead(b *batch) {
	t := &rmw{c: u.c, resource: b.Object(), b: b}
	t.hand = func(others []int) {
		b.Handback(others, false, t.attempts, t.waited) // every attempt so far failed
		b.Release()
	}
	out, err := u.transact(t)
	if err != nil && updaters.Splittable(err) && !refusedForVisibility(err) {
		var mine []int
		for i := range b.Members {
			if t.mine(i) {
				mine = append(mine, i)
			}
		}
		if len(mine) > 1 {
			// The refused write was an attempt of each change: the
			// change's solo run is its retry, not a call of its own.
			b.Handback(mine, true, t.end.Retries+1, t.end.Waited)
			return
		}
	}
	resource := b.Object()
	for i, w := range b.Members {
		if t.handed[i] {
			continue
		}
		var o outcome
		if i < len(out) {
			o = out[i]
		}
		var (
			pol *iampb.Policy
			e   error
			own bool
		)
		switch {
		case o.err != nil:
			e, own = wrap(resource, o.err), true
		case err != nil:
			e = wrap(resource, err)
		case o.pol != nil:
			pol = proto.Clone(o.pol).(*iampb.Policy)
		default:
			// A live caller of a successful attempt has a policy or an
			// error; one whose change did not run left. Fail loudly
			// rather than return nil, nil.
			e = wrap(resource, status.Error(grpccodes.Internal, "iamretry/policy: no outcome for this update"))
		}
		b.Deliver(i, pol, e, updaters.Ended(w.Retries, w.Waited, t.end, e, own))
	}
}
