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
// retry deadline with every other face of r, and r's per-attempt timeout
// bounds each GetIamPolicy and SetIamPolicy call. Reruns after a conflict
// follow WithConflictBackoff's schedule and never count toward r's attempt
// cap. r's 404 opt-in also waits for members IAM cannot see yet (package
// doc: Members IAM cannot see yet). Over a client that carries r's face,
// the Updater alone retries its calls (package doc: Use). A nil c, a nil r
// or one not built by interceptor.New, and invalid options give an error
// naming each, and no Updater.
func NewUpdater(c Client, r *interceptor.Retrier, opts ...Option) (*Updater, error) {
	var cfg updaterConfig
	if err := updaters.Check("iamretry/policy", c, "an iam/apiv1 IamPolicyClient, a resourcemanager client, FromAdmin, FromConn, ...", r, &cfg, &cfg.errs, opts); err != nil {
		return nil, err
	}
	return &Updater{c: c, r: r, conflicts: cfg.conflicts, core: updaters.NewCore[[]Mutation, *iampb.Policy](r)}, nil
}

// Update applies the mutations, in order, to the IAM policy of resource and
// returns the policy as it stands after them: the policy written, or the
// policy read when nothing changed (then nothing is written). After a
// conflict or a transient failure it reruns all from a fresh read, within
// the Retrier's deadline and ctx, so Mutations must be idempotent (see
// Mutation). Concurrent Updates of resource are coalesced; a panic in a
// Mutation reaches its own caller (package doc: Coalescing).
//
// Errors name the resource and keep their cause's gRPC status (a conflict
// is ABORTED). On a Mutation's error (wrapped) or ErrTooManyPrincipals,
// nothing of this call's mutations is written. When ctx ends first, Update
// returns at once with ctx's code (what was written: package doc).
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
