package policy

import (
	"bytes"
	"context"
	"slices"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/codes"
)

// The read-modify-write: the inner layer. It is given a resource and the
// changes of one batch, runs on the retry engine, and returns each change's
// outcome. It knows nothing of queues, batches or waiters, and calls nothing
// of the batching layer (coalesce.go): the changes' own state (change.go)
// says which were withdrawn.

// noGAXRetry is appended to every call the Updater makes: the Updater owns
// its retries, and a GAPIC client's own (resourcemanager v3's GetIamPolicy
// retries UNAVAILABLE by default) would multiply them.
var noGAXRetry = gax.WithRetry(nil)

// outcome is what the last attempt of a read-modify-write made of one change.
type outcome struct {
	pol      *iampb.Policy // the policy the caller sees on success
	err      error         // the caller's own failure: its mutation, the limit
	panicked any           // its Mutation's panic
	goexit   bool          // its Mutation called runtime.Goexit
	ran      bool          // its mutations ran in the last attempt
}

// rmw is one read-modify-write of resource for changes.
type rmw struct {
	u        *Updater
	resource string
	changes  []*change
	out      []outcome
	// probe: a grant to a member not visible yet is not rerun, even for a
	// change tried alone (a batch split tries it again after the others).
	probe bool
}

// transact runs the read-modify-write on the Updater's Retrier and returns
// each change's outcome in the last attempt, and the error that ended it,
// if any.
func (u *Updater) transact(ctx context.Context, resource string, changes []*change) ([]outcome, error) {
	out, err := u.try(ctx, resource, changes, false)
	return out, forCaller(err)
}

// try is transact, with the engine's own error (a notVisibleError is not
// turned into the caller's yet); probe as in rmw.
func (u *Updater) try(ctx context.Context, resource string, changes []*change, probe bool) ([]outcome, error) {
	t := &rmw{u: u, resource: resource, changes: changes, probe: probe}
	err := u.engine(u.r, ctx, UpdateMethod, resource, judgeNotVisible, t.attempt)
	return t.out, err
}

func readRequest(resource string) *iampb.GetIamPolicyRequest {
	return &iampb.GetIamPolicyRequest{
		Resource: resource,
		Options:  &iampb.GetPolicyOptions{RequestedPolicyVersion: 3},
	}
}

// liveCount is how many changes are still wanted.
func (t *rmw) liveCount() int {
	n := 0
	for _, c := range t.changes {
		if !c.withdrawn() {
			n++
		}
	}
	return n
}

// live reports whether any change is still wanted.
func (t *rmw) live() bool {
	return slices.ContainsFunc(t.changes, func(c *change) bool { return !c.withdrawn() })
}

// attempt is one read-modify-write.
func (t *rmw) attempt(ctx context.Context) error {
	t.out = make([]outcome, len(t.changes))
	if !t.live() {
		return gone(ctx)
	}
	c := t.u.c
	read, err := c.GetIamPolicy(ctx, readRequest(t.resource), noGAXRetry)
	if err != nil {
		return err
	}
	if read == nil {
		return status.Error(grpccodes.Internal, "GetIamPolicy answered no policy")
	}

	work := proto.Clone(read).(*iampb.Policy)
	count := principals(work)
	changed := false
	for i, ch := range t.changes {
		cp := proto.Clone(work).(*iampb.Policy)
		a := ch.apply(cp)
		o := &t.out[i]
		o.ran = a.ran
		switch {
		case !a.ran:
			continue
		case a.panicked != nil:
			o.panicked = a.panicked
			continue
		case a.goexit:
			o.goexit = true
			continue
		case a.err != nil:
			o.err = a.err
			continue
		case !a.changed:
			continue
		}
		if n := principals(cp); n > MaxPrincipals && n > count {
			o.err = &limitError{count: n}
			continue
		}
		work, count, changed = cp, principals(cp), true
	}
	if !slices.ContainsFunc(t.out, func(o outcome) bool { return o.ran }) {
		return gone(ctx)
	}

	result := read
	if changed {
		if len(read.GetEtag()) == 0 {
			return status.Error(grpccodes.FailedPrecondition,
				"GetIamPolicy answered a policy without an etag; writing it would be a blind overwrite, so nothing was written")
		}
		t.u.countWrite(t.u.r, ctx)
		written, err := c.SetIamPolicy(ctx, writeRequest(t.resource, read, work), noGAXRetry)
		if err != nil {
			if codes.CodeOf(err) == grpccodes.FailedPrecondition {
				return t.judgePrecondition(ctx, read, err)
			}
			if missingMember(err) {
				return &notVisibleError{err: err, alone: !t.probe && t.liveCount() == 1}
			}
			return err
		}
		if written == nil {
			return status.Error(grpccodes.Internal, "SetIamPolicy answered no policy")
		}
		result = written
	}
	for i := range t.out {
		if o := &t.out[i]; o.ran && o.err == nil && o.panicked == nil && !o.goexit {
			o.pol = result
		}
	}
	return nil
}

// gone is the error of an attempt whose callers have all given up (the
// batch context ends when the last one does).
func gone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// judgePrecondition decides what a FAILED_PRECONDITION answer to the write
// means. Some services answer a stale etag with it: it is a conflict only
// when a fresh read shows the etag moved; otherwise it is the server's
// refusal, returned as it is.
func (t *rmw) judgePrecondition(ctx context.Context, read *iampb.Policy, werr error) error {
	fresh, err := t.u.c.GetIamPolicy(ctx, readRequest(t.resource), noGAXRetry)
	if err != nil {
		if codes.OfError(err) == codes.Transient {
			return err // cannot tell: rerun from the read
		}
		return werr
	}
	if !bytes.Equal(fresh.GetEtag(), read.GetEtag()) {
		return &conflictError{err: werr}
	}
	return werr
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
