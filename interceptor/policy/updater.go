package policy

import (
	"context"
	"slices"

	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/updaters"
	"github.com/iamretry/iamretry/internal/iammethods"
)

// UpdateMethod is the Method of the Attempts an Updater reports (and the
// method its classifier is given): the read-modify-write as a whole, whose
// resource is in Attempt.Resource.
// Its value is "iamretry.policy/Update".
const UpdateMethod = iammethods.PolicyUpdate

// Updater changes IAM policies by read-modify-write, retried as Google's IAM
// guidance says, and coalesces concurrent changes of one resource into one
// read-modify-write. It is safe for concurrent use; share one per client.
// It has no goroutine of its own (a batch runs on its callers'
// goroutines), so it needs no Close.
type Updater struct {
	c         Client
	r         *interceptor.Retrier
	conflicts interceptor.ConflictBackoff
	core      *updaters.Core[[]Mutation, *iampb.Policy]
}

// Option configures what only an Updater has (everything else is the
// Retrier's, given to NewUpdater). A nil Option is refused.
type Option func(*updaterConfig)

type updaterConfig struct {
	conflicts interceptor.ConflictBackoff
	errs      []error
}

// WithConflictBackoff chooses the schedule of the reruns after a concurrent
// change (default interceptor.ScaledConflicts; interceptor.DocumentedConflicts
// reruns on the Retrier's Backoff, n counting conflicts). An unknown value
// is refused by NewUpdater with an error naming it.
func WithConflictBackoff(s interceptor.ConflictBackoff) Option {
	return func(c *updaterConfig) { updaters.SetConflicts(s, &c.conflicts, &c.errs) }
}

// NewUpdater returns an Updater that reads and writes policies through c and
// runs each read-modify-write on r (interceptor.Transact): it shares r's
// retry budget, clock, random source, meter, observers, logger, backoff and
// retry deadline with every other face of r. WithClassifier's function is
// given the method UpdateMethod, and observers see one Attempt per failed
// read-modify-write, with Method UpdateMethod and Resource the resource.
// r's per-attempt timeout bounds each GetIamPolicy and SetIamPolicy call;
// a RetryInfo delay is the floor of a wait; r's 404 opt-in
// (interceptor.WithRetryNotFound, or RetryNotFoundContext on an Update's
// context) applies to grants to members IAM cannot see yet. Reruns after a
// conflict follow WithConflictBackoff's schedule and never count toward
// r's attempt cap (a cap sized for single calls would lose changes under
// contention). A nil c, a nil r or one not built by interceptor.New, and
// invalid options give an error naming each, and no Updater.
//
// The Updater owns the retries of the calls it makes: it marks their
// context, so that r's interceptor (or RoundTripper) on c's connection
// passes them straight through, and it passes gax.WithRetry(nil) to each,
// so that a GAPIC client's own retries stay off. Composed so (the Updater
// over a client that carries r), the server sees the attempts of one
// schedule and the caller never waits past r's deadline. That holds for
// every c that passes its context through and does not retry on its own
// otherwise.
//
// r's metrics (interceptor.WithMeterProvider) count each Update once, as a
// call of UpdateMethod, however it was batched: iamretry.client.calls with
// the code of the error Update returned (OK when none); the retries and
// retry_delay histograms with the attempts its change made after the first
// and the waits between them, over every read-modify-write it was part of
// (a coalesced write that was refused and split, or handed the change back,
// was an attempt of that change: its next run is a retry, after no wait);
// gave_up when its error is a give-up of r's (deadline, budget, ...), or
// with context_done when its context ended after its change met a failure.
// The writes and conflicts counters count the read-modify-writes'. An
// Update refused before it is queued (empty resource, nil Mutation, a
// context already done), or that panics or ends in runtime.Goexit, is not
// counted. Observers and the logger hear each read-modify-write's Attempts once,
// with the batch's context (the values of the caller that leads it): a batch of
// several Updates is one run to them, and a batch split after a refusal
// reports that refusal (NotRetryable) before each change runs alone, as a
// run of its own. The span events of a batch go to the span of each caller
// still waiting on it.
func NewUpdater(c Client, r *interceptor.Retrier, opts ...Option) (*Updater, error) {
	var cfg updaterConfig
	if err := updaters.Check("iamretry/policy", c, "an iam/apiv1 IamPolicyClient, a resourcemanager client, FromAdmin, FromConn, ...", r, &cfg, &cfg.errs, opts); err != nil {
		return nil, err
	}
	return &Updater{c: c, r: r, conflicts: cfg.conflicts, core: updaters.NewCore[[]Mutation, *iampb.Policy](r)}, nil
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
// the Retrier's backoff (the conflict schedule after a conflict) and within
// its deadline and ctx. Mutations are
// rerun on each fresh read, so they must be idempotent (see Mutation).
//
// Concurrent Updates of one resource through one Updater are coalesced: a
// call that arrives while a read-modify-write of the resource is in flight
// joins the next one, with every other call that arrives meanwhile whose
// outgoing headers (gRPC outgoing metadata, gax callctx headers) and
// context forms (DisableContext, RetryNotFoundContext, DeadlineContext,
// MaxAttemptsContext) are those of the first. There is no added delay and
// no goroutine of the Updater's own: the first caller leads the batch on
// its goroutine, and each caller's mutations run on that caller's
// goroutine, in arrival order, each on a copy that is kept only if all of
// them succeed and stay within MaxPrincipals; each caller gets the policy
// its batch wrote, or its own error. The batch's calls carry the values of
// its leader's context and the latest of the callers' deadlines (none if a
// caller has none). A write of several callers' changes refused
// INVALID_ARGUMENT or FAILED_PRECONDITION (not a conflict) is split: each
// change is tried alone, so that only the caller to blame fails.
//
// A write refused INVALID_ARGUMENT "... does not exist" naming a member that
// a change grants (a service account created moments ago, not visible to
// IAM yet) fails only the changes that grant it: the batch's other changes
// are written at once, in the next read-modify-write. With the Retrier's
// 404 opt-in the changes that grant the member wait for it, within the
// retry deadline, on a read-modify-write of their own that holds no other
// caller of the resource; without, their callers get the server's error at
// once, naming the option. A refusal that names no member the change
// grants ("Role (roles/editor) does not exist in the resource's
// hierarchy.") is final and returned at once.
//
// Errors name the resource and keep the gRPC status of their cause
// (status.Code(err) works; a FAILED_PRECONDITION found to be a conflict is
// reported as ABORTED). A Mutation's error is wrapped (errors.Is works) and
// nothing of that caller's mutations is written. A change past
// MaxPrincipals fails with ErrTooManyPrincipals (INVALID_ARGUMENT).
//
// When ctx ends before the result is known, Update returns at once (or, when
// its own Mutation is running at that moment, as soon as that returns) with
// an error that wraps ctx's error and has its code: if the call was still
// queued, nothing of it was written; if its read-modify-write was under
// way, its change may have been written, as with any cancelled write, and
// later reruns of the batch leave it out. A caller that leads its batch
// returns so too: the batch's in-flight call is cancelled, and the next
// caller of the batch leads a rerun from a fresh read.
//
// Nothing handed to the Updater runs on a goroutine the caller cannot
// reach: a panic or a runtime.Goexit (a t.FailNow) in a Mutation ends its
// own caller's goroutine as it would have called the Mutation itself; in
// the Client, an observer, a logger or a classifier, the goroutine of the
// caller that leads the batch. The other callers' changes run again in the
// next batch, and later Updates of the resource carry on.
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
	pol, err, gone, queued := u.core.Do(ctx, resource, UpdateMethod, slices.Clone(m), u.lead)
	if gone {
		return nil, wrap(resource, left(ctx, queued))
	}
	return pol, err
}
