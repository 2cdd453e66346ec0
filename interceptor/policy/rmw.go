package policy

import (
	"context"
	"slices"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// The read-modify-write of one batch (coalesce.go): it runs the batch's
// changes as one interceptor.Transact, each caller's mutations on that
// caller's goroutine (Batch.Apply), and returns each change's outcome.

// noGAXRetry is appended to every call the Updater makes: the Updater owns
// its retries, and a GAPIC client's own (resourcemanager v3's GetIamPolicy
// retries UNAVAILABLE by default) would multiply them.
var noGAXRetry = gax.WithRetry(nil)

// outcome is what the last attempt of a read-modify-write made of one change.
type outcome struct {
	pol    *iampb.Policy // the policy the caller sees on success
	err    error         // the caller's own failure: its mutation, the limit
	ran    bool          // its mutations ran to their end in the last attempt
	grants []string      // the members its change grants anew (in the write)
}

// rmw is one read-modify-write of resource for changes: the Read, Modify
// and Write of its interceptor.Transact.
type rmw struct {
	c        Client
	resource string
	b        *batch
	// out is each change's outcome in the last attempt (made anew by each
	// attempt's read).
	out []outcome
	// judging: the write was just refused FAILED_PRECONDITION, so the next
	// read is Transact's fresh read that judges it, within the same attempt.
	judging bool
	// read is the policy the last Modify was given: the write keeps its
	// version and compares its audit configs.
	read *iampb.Policy
	// handed marks the changes handed back (hand): this read-modify-write
	// never runs them again, and has no outcome for them.
	handed []bool
	// hand, when a write is refused because a member it grants is not
	// visible yet, is given the indexes of the changes that do not grant
	// it (maybe none): the batching layer runs them elsewhere, at once, and
	// stops waiting for this read-modify-write, which goes on with the
	// changes that grant the member (they wait for it, or fail). Nil:
	// nothing is handed back; every change waits or fails alike.
	hand func(others []int)

	// What the changes lived through, for the metrics, which count each
	// caller's call (lead records them; Transact does not): clock is the
	// Retrier's; attempts counts the attempts so far (each failed but maybe
	// the last), waited the time between them, last is when the last call
	// to the Client returned. end is Transact's end (rmwhook.Run.Ended).
	clock    interceptor.Clock
	attempts int
	waited   time.Duration
	last     time.Time
	end      rmwhook.End
}

// transact runs the read-modify-write t on the Updater's Retrier under its
// batch's context and returns each change's outcome in the last attempt,
// and the error that ended it, if any.
func (u *Updater) transact(t *rmw) ([]outcome, error) {
	t.handed = make([]bool, len(t.b.Members))
	t.clock = u.r.Clock()
	ctx := t.b.Context()
	run := &rmwhook.Run{Callers: t.b.Callers, Ended: func(e rmwhook.End) { t.end = e }}
	pol, err := interceptor.Transact(rmwhook.With(ctx, run), u.r, interceptor.ReadModifyWrite[*iampb.Policy]{
		Method:    UpdateMethod,
		Resource:  t.resource,
		Read:      t.readPolicy,
		Modify:    t.modify,
		Write:     t.write,
		Etag:      func(p *iampb.Policy) string { return string(p.GetEtag()) },
		Conflicts: u.conflicts,
		Classify:  judgeNotVisible,
	})
	if err == nil {
		for i := range t.out {
			if o := &t.out[i]; o.ran && o.err == nil {
				o.pol = pol
			}
		}
	}
	return t.out, forCaller(err, u.core.RetriesNotFound(ctx))
}

func readRequest(resource string) *iampb.GetIamPolicyRequest {
	return &iampb.GetIamPolicyRequest{
		Resource: resource,
		Options:  &iampb.GetPolicyOptions{RequestedPolicyVersion: 3},
	}
}

// mine reports whether change i is still this read-modify-write's: not
// handed back, and its caller still waits.
func (t *rmw) mine(i int) bool {
	return !t.handed[i] && t.b.Live(i)
}

// live reports whether any change is still wanted.
func (t *rmw) live() bool {
	for i := range t.b.Members {
		if t.mine(i) {
			return true
		}
	}
	return false
}

// readPolicy reads the policy, unless every caller has given up. The read
// that starts an attempt clears the outcomes of the one before.
func (t *rmw) readPolicy(ctx context.Context) (*iampb.Policy, error) {
	if t.judging {
		t.judging = false
	} else {
		t.out = make([]outcome, len(t.b.Members))
		if t.attempts > 0 {
			t.waited += t.clock.Now().Sub(t.last)
		}
		t.attempts++
	}
	if !t.live() {
		return nil, gone(ctx)
	}
	read, err := t.c.GetIamPolicy(ctx, readRequest(t.resource), noGAXRetry)
	t.returned(err)
	if err != nil {
		return nil, err
	}
	if read == nil {
		return nil, status.Error(grpccodes.Internal, "GetIamPolicy answered no policy")
	}
	return read, nil
}

// modify runs each change's mutations on a copy of the policy read (on its
// caller's goroutine, in arrival order), keeps
// the copy of each change that succeeded and stays within MaxPrincipals,
// and records each change's outcome. It returns the policy to write, or
// read itself when nothing changed.
func (t *rmw) modify(read *iampb.Policy) (*iampb.Policy, bool, error) {
	t.read = read
	work := proto.Clone(read).(*iampb.Policy)
	count := principals(work)
	changed := false
	var had map[string]bool // the members of work, made at first use
	for i, w := range t.b.Members {
		if !t.mine(i) {
			continue
		}
		cp := proto.Clone(work).(*iampb.Policy)
		var (
			did bool
			err error
		)
		// False: its caller left, or its Mutation panicked or called
		// runtime.Goexit on the caller's goroutine: the change is left out.
		ran := t.b.Apply(i, func() { did, err = runMutations(cp, w.Change) })
		o := &t.out[i]
		o.ran = ran
		switch {
		case !ran:
			continue
		case err != nil:
			o.err = err
			continue
		case !did:
			continue
		}
		if n := principals(cp); n > MaxPrincipals && n > count {
			o.err = &limitError{count: n}
			continue
		}
		if had == nil {
			had = memberSet(work)
		}
		o.grants = granted(cp, had)
		for _, m := range o.grants {
			had[m] = true
		}
		work, count, changed = cp, principals(cp), true
	}
	if !slices.ContainsFunc(t.out, func(o outcome) bool { return o.ran }) {
		return nil, false, context.Canceled // every caller has given up
	}
	if !changed {
		return read, false, nil
	}
	return work, true, nil
}

// write writes work with the etag of the policy read.
func (t *rmw) write(ctx context.Context, work *iampb.Policy) (*iampb.Policy, error) {
	written, err := t.c.SetIamPolicy(ctx, writeRequest(t.resource, t.read, work), noGAXRetry)
	t.returned(err)
	if err != nil {
		t.judging = codes.CodeOf(err) == grpccodes.FailedPrecondition
		if t.notVisible(err) {
			return nil, &notVisibleError{err: err}
		}
		return nil, err
	}
	if written == nil {
		return nil, status.Error(grpccodes.Internal, "SetIamPolicy answered no policy")
	}
	return written, nil
}

// returned notes that a call to the Client returned err: the engine's wait
// before the next attempt, if any, starts now.
func (t *rmw) returned(err error) {
	t.last = t.clock.Now()
	if err != nil {
		t.b.Fail()
	}
}

// notVisible reports whether err refuses the write because a member that
// one of its changes grants anew is not visible to IAM yet: the refusal
// names that member. It then hands the changes that do not grant it back
// (hand), so that only the ones that do wait.
func (t *rmw) notVisible(err error) bool {
	words := refusedMembers(err)
	if words == nil {
		return false
	}
	var grants, others []int
	for i := range t.b.Members {
		switch {
		case t.handed[i]:
		case slices.ContainsFunc(t.out[i].grants, func(m string) bool { return names(words, m) }):
			grants = append(grants, i) // its caller left meanwhile or not: the write granted it
		case t.b.Live(i):
			others = append(others, i)
		}
	}
	if len(grants) == 0 {
		return false // names no member granted here: the server's final word
	}
	if t.hand != nil {
		for _, i := range others {
			t.handed[i] = true
		}
		t.hand(others)
	}
	return true
}

// gone is the error of an attempt whose callers have all given up (the
// batch context ends when the last one does).
func gone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// writeRequest builds the SetIamPolicy request for the mutated copy work of
// the policy read.
func writeRequest(resource string, read, work *iampb.Policy) *iampb.SetIamPolicyRequest {
	work.Etag = read.GetEtag()
	work.Bindings = slices.DeleteFunc(work.Bindings, func(b *iampb.Binding) bool { return len(b.GetMembers()) == 0 })
	work.Version = max(read.GetVersion(), 1)
	if hasCondition(work) {
		work.Version = 3
	}
	paths := []string{"bindings", "etag"}
	if !slices.EqualFunc(read.GetAuditConfigs(), work.GetAuditConfigs(), func(a, b *iampb.AuditConfig) bool {
		return proto.Equal(a, b)
	}) {
		paths = append(paths, "audit_configs")
	}
	return &iampb.SetIamPolicyRequest{
		Resource:   resource,
		Policy:     work,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: paths},
	}
}

func hasCondition(p *iampb.Policy) bool {
	return slices.ContainsFunc(p.GetBindings(), func(b *iampb.Binding) bool { return b.GetCondition() != nil })
}

// principals counts member entries across bindings, as IAM counts them
// against MaxPrincipals.
func principals(p *iampb.Policy) int {
	n := 0
	for _, b := range p.GetBindings() {
		n += len(b.GetMembers())
	}
	return n
}
