package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"cloud.google.com/go/iam/apiv1/iampb"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// Updater changes IAM policies by read-modify-write, retried as Google's IAM
// guidance says, and coalesces concurrent changes of one resource into one
// read-modify-write. It is safe for concurrent use; share one per client.
// It starts a goroutine per resource only while an Update of that resource
// is under way, so it needs no Close.
type Updater struct {
	c Client
	r *interceptor.Retrier

	mu     sync.Mutex
	queues map[string]*queue // resources with a committer running
}

// NewUpdater returns an Updater that reads and writes policies through c and
// retries with an interceptor.Retrier built from opts by interceptor.New: the
// guidance's backoff (1 s, 2 s, 4 s, ... plus up to 1 s of jitter, at most
// 32 s) within a 60 s retry deadline unless opts say otherwise. Options
// apply as they do to the interceptor; WithClassifier's function is given
// the method "policy.Update RESOURCE", and observers see one Attempt per
// failed read-modify-write. A nil c, or invalid options, give an error and
// no Updater.
//
// c should not retry on its own (a GAPIC client's default CallOptions may):
// retries at two layers multiply.
func NewUpdater(c Client, opts ...interceptor.Option) (*Updater, error) {
	if isNil(c) {
		return nil, errors.New("iamretry/policy: NewUpdater needs a Client (an iam/apiv1 IamPolicyClient, a resourcemanager client, FromAdmin, FromConn, ...); got nil")
	}
	r, err := interceptor.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("iamretry/policy: NewUpdater: %w", err)
	}
	return &Updater{c: c, r: r, queues: map[string]*queue{}}, nil
}

func isNil(c Client) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// Update applies the mutations, in order, to the IAM policy of resource and
// returns the policy as it stands after them: the policy written, or the
// policy read when nothing changed (then nothing is written).
//
// It reads the policy with RequestedPolicyVersion 3, applies the mutations
// to a copy, and when something changed writes it with SetIamPolicy carrying
// the read etag, the update_mask "bindings,etag" (plus "audit_configs" when
// a mutation changed them) and version 3 whenever a binding has a condition
// (else the version read). A concurrent change (ABORTED, or
// FAILED_PRECONDITION when a fresh read shows the etag moved) or a transient
// failure of the read or the write runs it all again from the read, after
// the Retrier's backoff and within its deadline and ctx. Mutations are
// rerun on each fresh read, so they must be idempotent (see Mutation).
//
// Concurrent Updates of one resource through one Updater are coalesced: a
// call that arrives while a read-modify-write of the resource is in flight
// joins the next one, with every other call that arrives meanwhile. There
// is no added delay. The calls' mutations apply in arrival order, each
// caller's on a copy that is kept only if all of them succeed and stay
// within MaxPrincipals; each caller gets the policy its batch wrote, or its
// own error. The batch runs under a context that carries the values of its
// first caller's context, has the latest of the callers' deadlines (none if
// a caller has none), and is cancelled once every caller has given up, so
// one caller's cancellation never fails the others.
//
// Errors name the resource and keep the gRPC status of their cause
// (status.Code(err) works; a FAILED_PRECONDITION found to be a conflict is
// reported as ABORTED). A Mutation's error is wrapped (errors.Is works) and
// nothing of that caller's mutations is written. A change past
// MaxPrincipals fails with ErrTooManyPrincipals (INVALID_ARGUMENT). When ctx
// ends before the result is known, Update returns at once with an error
// that wraps ctx's error and has its code: if the call was still queued,
// nothing of it was written; if its read-modify-write was under way, its
// change may have been written, as with any cancelled write, and later
// reruns of the batch leave it out. A Mutation that panics panics Update's
// goroutine, after its batch ends.
func (u *Updater) Update(ctx context.Context, resource string, m ...Mutation) (*iampb.Policy, error) {
	if resource == "" {
		return nil, invalid("Update: the resource name must not be empty")
	}
	for i, f := range m {
		if f == nil {
			return nil, wrap(resource, invalid("Update: mutation %d of %d is nil", i+1, len(m)))
		}
	}
	if ctx.Err() != nil {
		return nil, wrap(resource, left(ctx, true))
	}
	w := &waiter{ctx: ctx, muts: slices.Clone(m), done: make(chan struct{})}
	u.enqueue(resource, w)
	select {
	case <-w.done:
	case <-ctx.Done():
		if queued, ok := u.leave(resource, w); ok {
			return nil, wrap(resource, left(ctx, queued))
		}
		<-w.done // the result came first
	}
	if w.panicked != nil {
		panic(w.panicked)
	}
	return w.pol, w.err
}

// outcome is what one attempt of a read-modify-write made of one caller's
// mutations.
type outcome struct {
	pol      *iampb.Policy // the policy the caller sees on success
	err      error         // the caller's own failure: its mutation, the limit
	panicked any
}

// transact runs the read-modify-write for the callers ws, retried by the
// Retrier, and returns each caller's outcome in the last attempt, and the
// error that ended it, if any.
func (u *Updater) transact(b *batch, ws []*waiter) ([]outcome, error) {
	var out []outcome
	t := interceptor.Task{Name: "policy.Update " + b.resource, RetryConflict: true}
	err := u.r.Do(b.ctx, t, func(ctx context.Context) error {
		out = make([]outcome, len(ws))
		return u.attempt(ctx, b, ws, out)
	})
	return out, err
}

func readRequest(resource string) *iampb.GetIamPolicyRequest {
	return &iampb.GetIamPolicyRequest{
		Resource: resource,
		Options:  &iampb.GetPolicyOptions{RequestedPolicyVersion: 3},
	}
}

// attempt is one read-modify-write for the callers of ws (members of b)
// still waiting.
func (u *Updater) attempt(ctx context.Context, b *batch, ws []*waiter, out []outcome) error {
	resource := b.resource
	if !slices.Contains(u.live(ws), true) {
		return gone(ctx)
	}
	read, err := u.c.GetIamPolicy(ctx, readRequest(resource))
	if err != nil {
		return err
	}
	if read == nil {
		return status.Error(grpccodes.Internal, "GetIamPolicy answered no policy")
	}

	// Callers that leave from now on wait for the mutations to be applied
	// (see leave); those that left before are left out.
	b.applying.Lock()
	live := u.live(ws)
	work := proto.Clone(read).(*iampb.Policy)
	count := principals(work)
	changed := false
	for i, w := range ws {
		if !live[i] {
			continue
		}
		cp := proto.Clone(work).(*iampb.Policy)
		c, p, err := apply(cp, w.muts)
		switch {
		case p != nil:
			out[i].panicked = p
			continue
		case err != nil:
			out[i].err = err
			continue
		case !c:
			continue
		}
		if n := principals(cp); n > MaxPrincipals && n > count {
			out[i].err = &limitError{count: n}
			continue
		}
		work, count, changed = cp, principals(cp), true
	}
	b.applying.Unlock()
	if !slices.Contains(live, true) {
		return gone(ctx)
	}

	result := read
	if changed {
		if len(read.GetEtag()) == 0 {
			return status.Error(grpccodes.FailedPrecondition,
				"GetIamPolicy answered a policy without an etag; writing it would be a blind overwrite, so nothing was written")
		}
		written, err := u.c.SetIamPolicy(ctx, writeRequest(resource, read, work))
		if err != nil {
			if status.Code(err) == grpccodes.FailedPrecondition {
				return u.judgePrecondition(ctx, resource, read, err)
			}
			return err
		}
		if written == nil {
			return status.Error(grpccodes.Internal, "SetIamPolicy answered no policy")
		}
		result = written
	}
	for i := range out {
		if live[i] && out[i].err == nil && out[i].panicked == nil {
			out[i].pol = result
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

// apply runs a caller's mutations on p, turning an error or a panic of one
// into that caller's outcome.
func apply(p *iampb.Policy, muts []Mutation) (changed bool, panicked any, err error) {
	defer func() {
		if r := recover(); r != nil {
			changed, panicked, err = false, r, nil
		}
	}()
	for j, m := range muts {
		c, err := m(p)
		if err != nil {
			return false, nil, &mutationError{n: j + 1, err: err}
		}
		changed = changed || c
	}
	return changed, nil, nil
}

// judgePrecondition decides what a FAILED_PRECONDITION answer to the write
// means. Some services answer a stale etag with it: it is a conflict only
// when a fresh read shows the etag moved; otherwise it is the server's
// refusal, returned as it is.
func (u *Updater) judgePrecondition(ctx context.Context, resource string, read *iampb.Policy, werr error) error {
	fresh, err := u.c.GetIamPolicy(ctx, readRequest(resource))
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
