package role

import (
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// batch is one coalesced batch of role Updates (the Updaters' shared core,
// interceptor/internal/updaters).
type batch = updaters.Batch[[]Change, *adminpb.Role]

// lead runs b's read-modify-write on the leader's goroutine and hands out
// the results. A write of several callers' changes that IAM refuses
// (INVALID_ARGUMENT: a permission a custom role cannot hold;
// FAILED_PRECONDITION that was no conflict) is split: each caller's change
// goes back to the head of the queue to be tried alone, in arrival order,
// so that only the caller to blame fails.
func (u *Updater) lead(b *batch) {
	t := &rmw{c: u.c, name: b.Object(), b: b}
	run := &rmwhook.Run{Callers: b.Callers, Ended: func(e rmwhook.End) { t.end = e }}
	role, err := interceptor.Transact(rmwhook.With(b.Context(), run), u.r, interceptor.ReadModifyWrite[*adminpb.Role]{
		Method:    UpdateMethod,
		Resource:  t.name,
		Read:      t.readRole,
		Modify:    t.modify,
		Write:     t.write,
		Etag:      func(r *adminpb.Role) string { return string(r.GetEtag()) },
		Conflicts: u.conflicts,
	})
	if err != nil && t.refused && updaters.Splittable(err) {
		var mine []int
		for i := range b.Members {
			if t.out != nil && t.out[i].ran && b.Live(i) {
				mine = append(mine, i)
			}
		}
		if len(mine) > 1 {
			b.Handback(mine, true, t.end.Retries+1, t.end.Waited)
			return
		}
	}
	for i, w := range b.Members {
		var (
			res *adminpb.Role
			e   error
			own bool
		)
		switch {
		case t.out != nil && t.out[i].err != nil:
			e, own = wrapEnded(w.Context(), t.name, t.out[i].err), true
		case err != nil:
			e = wrapEnded(w.Context(), t.name, err)
		default:
			res = proto.Clone(role).(*adminpb.Role)
		}
		b.Deliver(i, res, e, updaters.Ended(w.Retries, w.Waited, t.end, e, own))
	}
}
