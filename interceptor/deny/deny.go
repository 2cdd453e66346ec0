package deny

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
	"github.com/iamretry/iamretry/interceptor/internal/updaters"
	"github.com/iamretry/iamretry/internal/iammethods"
)

// UpdateMethod is the Method of the Attempts an Updater reports (and the
// method its Retrier's classifier is given), the grpc.method of its
// metrics: the read-modify-write of a deny policy as a whole, whose policy
// name is in Attempt.Resource.
// Its value is "iamretry.deny/Update".
const UpdateMethod = iammethods.DenyUpdate

// Client is what an Updater reads and writes deny policies through. It is
// met as it is by iam/apiv2's *PoliciesClient, whether built by
// NewPoliciesClient (gRPC) or NewPoliciesRESTClient (REST); wire it with
// interceptor.NewClient or interceptor.NewRESTClient so that the Retrier's
// face is beneath it and gax's own retries are off.
type Client interface {
	GetPolicy(ctx context.Context, req *iampb.GetPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error)
	CreatePolicy(ctx context.Context, req *iampb.CreatePolicyRequest, opts ...gax.CallOption) (*iamv2.CreatePolicyOperation, error)
	UpdatePolicy(ctx context.Context, req *iampb.UpdatePolicyRequest, opts ...gax.CallOption) (*iamv2.UpdatePolicyOperation, error)
}

var _ Client = (*iamv2.PoliciesClient)(nil)

// noGAXRetry is passed on every call and poll an Updater makes: it owns
// their retries, and a GAPIC client's own would multiply them.
var noGAXRetry = gax.WithRetry(nil)

// Defaults of the polls of a long-running write.
const (
	// DefaultPollInterval is the first wait between two polls of an
	// operation that is not done; the waits double up to MaxPollInterval.
	DefaultPollInterval = time.Second
	// MaxPollInterval caps the waits between polls (unless
	// WithPollInterval asks for longer ones).
	MaxPollInterval = 32 * time.Second
)

// Updater changes IAM deny policies (google.iam.v2.Policies) by
// read-modify-write, retried as Google's IAM guidance says: each batch of
// Updates is one interceptor.Transact on the Retrier given to NewUpdater.
// It is safe for concurrent use; share one per client. Concurrent Updates
// of one policy through one Updater are coalesced into one
// read-modify-write, as the policy Updater's are. It has no goroutine of
// its own (a batch runs on its callers' goroutines), so it needs no Close.
type Updater struct {
	c         Client
	r         *interceptor.Retrier
	conflicts interceptor.ConflictBackoff
	create    bool
	clock     interceptor.Clock
	poll      time.Duration
	core      *updaters.Core[[]Change, *iampb.Policy]
}

// Option configures what only an Updater has (everything else is the
// Retrier's, given to NewUpdater). A nil Option is refused.
type Option func(*config)

type config struct {
	conflicts interceptor.ConflictBackoff
	create    bool
	poll      time.Duration
	errs      []error
}

// WithConflictBackoff chooses the schedule of the reruns after a concurrent
// change (default interceptor.ScaledConflicts; interceptor.DocumentedConflicts
// reruns on the Retrier's Backoff, n counting conflicts). An unknown value
// is refused by NewUpdater with an error naming it.
func WithConflictBackoff(s interceptor.ConflictBackoff) Option {
	return func(c *config) { updaters.SetConflicts(s, &c.conflicts, &c.errs) }
}

// CreateIfAbsent makes Update create a policy that does not exist (GetPolicy
// answers NOT_FOUND): its rules are those the changes add (none: nothing is
// created and Update returns nil, nil), and it is created with CreatePolicy,
// whose operation is waited for as an update's is. A concurrent create that
// wins (ALREADY_EXISTS, at the call or in the operation; over REST gax
// reports the 409 as ABORTED, and the body says ALREADY_EXISTS) is a
// conflict: the transaction reruns from a fresh read and updates the policy
// the other writer made; so is a policy deleted between the read and the
// update (NOT_FOUND from UpdatePolicy). Without it, a policy that does not
// exist is GetPolicy's NOT_FOUND, returned as the Retrier's classifier
// decides (retried only with the 404 opt-in).
func CreateIfAbsent() Option { return func(c *config) { c.create = true } }

// WithPollInterval sets the first wait between two polls of an operation
// that is not done (default DefaultPollInterval); the waits double up to
// MaxPollInterval, or d when it is longer. d must be > 0.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithPollInterval(%v): the wait between polls must be > 0 (default %v)", d, DefaultPollInterval))
			return
		}
		c.poll = d
	}
}

// NewUpdater returns an Updater that reads and writes deny policies through
// c and runs each read-modify-write on r (interceptor.Transact): it shares
// r's retry budget, clock, random source, meter, observers, logger,
// backoff and retry deadline with every other face of r. r's per-attempt
// timeout bounds each GetPolicy call, and each write together with the
// wait for its operation. Reruns after a conflict follow
// WithConflictBackoff's schedule and never count toward r's attempt cap.
// Over a client that carries r's face, the Updater alone retries its calls
// (package doc). A nil c, a nil r or one not built by interceptor.New, and
// invalid options give an error naming each, and no Updater.
func NewUpdater(c Client, r *interceptor.Retrier, opts ...Option) (*Updater, error) {
	cfg := config{poll: DefaultPollInterval}
	if err := updaters.Check("iamretry/deny", c, "iam/apiv2's PoliciesClient, gRPC or REST", r, &cfg, &cfg.errs, opts); err != nil {
		return nil, err
	}
	return &Updater{c: c, r: r, conflicts: cfg.conflicts, create: cfg.create, clock: r.Clock(), poll: cfg.poll,
		core: updaters.NewCore[[]Change, *iampb.Policy](r)}, nil
}

// Update applies the changes, in order, to the rules of the deny policy
// name (policies/{attachment_point}/denypolicies/{policy_id}, the
// attachment point URL-encoded) and returns the policy as it stands after
// them: the policy written, or the policy read when nothing changed (then
// nothing is written). It waits for the write's operation within ctx, so
// give ctx a deadline. After a conflict or a transient failure it reruns
// all from a fresh read, never the write alone, and concurrent Updates of
// a policy are coalesced (package doc: The read-modify-write, Coalescing).
//
// A malformed name, a malformed change and no change at all are refused
// INVALID_ARGUMENT before any call. Errors name the policy and keep their
// cause's gRPC status over gRPC and REST alike (package doc: Errors).
func (u *Updater) Update(ctx context.Context, name string, changes ...Change) (*iampb.Policy, error) {
	if _, _, err := splitName(name, u.create); err != nil {
		return nil, invalid(name, err)
	}
	if err := checkChanges(name, changes); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, wrapErr(ctx, name, updaters.Left(ctx, true))
	}
	p, err, gone, queued := u.core.Do(ctx, name, UpdateMethod, slices.Clone(changes), u.lead)
	if gone {
		return nil, wrapErr(ctx, name, updaters.Left(ctx, queued))
	}
	return p, err
}

// batch is one coalesced batch of Updates (the Updaters' shared core,
// interceptor/internal/updaters).
type batch = updaters.Batch[[]Change, *iampb.Policy]

// lead runs b's read-modify-write on the leader's goroutine and hands out
// the results. A write of several callers' changes that IAM refuses
// (INVALID_ARGUMENT, FAILED_PRECONDITION that was no conflict: past 500
// rules, say) is split: each caller's change goes back to the head of the
// queue to be tried alone, in arrival order, so that only the caller to
// blame fails.
func (u *Updater) lead(b *batch) {
	name := b.Object()
	parent, id, _ := splitName(name, u.create) // checked by Update
	t := &txn{u: u, name: name, parent: parent, id: id, b: b}
	t.deadline, _ = b.Context().Deadline()
	run := &rmwhook.Run{Callers: b.Callers, Ended: func(e rmwhook.End) { t.end = e }}
	s, err := interceptor.Transact(rmwhook.With(b.Context(), run), u.r, interceptor.ReadModifyWrite[state]{
		Method:    UpdateMethod,
		Resource:  name,
		Read:      t.read,
		Modify:    t.modify,
		Write:     t.write,
		Etag:      etagOf,
		Conflicts: u.conflicts,
		Classify:  t.classify,
	})
	if err != nil && t.refused && updaters.Splittable(err) {
		var mine []int
		for i := range b.Members {
			if t.ran != nil && t.ran[i] && b.Live(i) {
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
			p *iampb.Policy
			e error
		)
		if err != nil {
			e = wrapErr(w.Context(), name, err)
		} else if s.p != nil {
			p = proto.Clone(s.p).(*iampb.Policy)
		}
		b.Deliver(i, p, e, updaters.Ended(w.Retries, w.Waited, t.end, e, false))
	}
}

// splitName parses policies/{attachment_point}/denypolicies/{policy_id}
// into its parent (policies/{attachment_point}/denypolicies) and its ID.
func splitName(name string, create bool) (parent, id string, err error) {
	segs := strings.Split(name, "/")
	const form = "a deny policy is named policies/{attachment_point}/denypolicies/{policy_id}, the attachment point URL-encoded (policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/my-policy)"
	switch {
	case len(segs) > 4 && segs[0] == "policies" && segs[len(segs)-2] == "denypolicies":
		return "", "", fmt.Errorf("invalid name %q: the attachment point must be URL-encoded, its slashes written %%2F: %s", name, form)
	case len(segs) != 4 || segs[0] != "policies" || segs[1] == "" || segs[2] != "denypolicies" || segs[3] == "":
		return "", "", fmt.Errorf("invalid name %q: %s", name, form)
	}
	if create && !validPolicyID(segs[3]) {
		return "", "", fmt.Errorf("invalid policy ID %q (CreateIfAbsent would create it): a policy ID is 3 to 63 characters: lowercase letters, digits, dashes and periods, starting with a lowercase letter", segs[3])
	}
	return strings.Join(segs[:3], "/"), segs[3], nil
}

// validPolicyID reports whether id is a policy ID CreatePolicy accepts
// (policy.proto: "The ID must contain 3 to 63 characters. It can contain
// lowercase letters and numbers, as well as dashes (-) and periods (.).
// The first character must be a lowercase letter.").
func validPolicyID(id string) bool {
	if len(id) < 3 || len(id) > 63 || id[0] < 'a' || id[0] > 'z' {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyz0123456789-.") == ""
}

// state is what a read found: the policy, or that there is none (only with
// CreateIfAbsent).
type state struct {
	p      *iampb.Policy
	absent bool
}

// absentEtag is the etag Transact is given for a policy that does not
// exist: not empty (that would be refused as a blind overwrite), and never
// one IAM makes.
const absentEtag = "\x00absent"

func etagOf(s state) string {
	if s.absent {
		return absentEtag
	}
	return s.p.GetEtag()
}

// txn is one batch's read-modify-write: the Read, Modify and Write of its
// Transact.
type txn struct {
	u      *Updater
	name   string
	parent string
	id     string
	b      *batch
	// ran marks the members whose changes ran in the last attempt.
	ran []bool
	// updating: the last write was an UpdatePolicy (not a create).
	updating bool
	// refused: the last write was refused with an error a batch is split
	// on; end is Transact's end (rmwhook.Run.Ended).
	refused bool
	end     rmwhook.End
	// deadline is the batch's context's deadline; zero for none.
	deadline time.Time
}

func (t *txn) read(ctx context.Context) (state, error) {
	p, err := t.u.c.GetPolicy(ctx, &iampb.GetPolicyRequest{Name: t.name}, noGAXRetry)
	if err != nil {
		if t.u.create && codes.CodeOf(err) == grpccodes.NotFound {
			return state{absent: true}, nil
		}
		t.b.Fail()
		return state{}, err
	}
	if p == nil {
		return state{}, status.Error(grpccodes.Internal, "GetPolicy answered no policy")
	}
	return state{p: p}, nil
}

// modify applies each member's changes, in arrival order, to a copy of the
// policy read (an empty one when it is absent), on the member's goroutine.
func (t *txn) modify(s state) (state, bool, error) {
	work := &iampb.Policy{}
	if !s.absent {
		work = proto.Clone(s.p).(*iampb.Policy)
	}
	t.ran, t.refused = make([]bool, len(t.b.Members)), false
	ran := false
	for i, w := range t.b.Members {
		if !t.b.Live(i) {
			continue
		}
		cp := proto.Clone(work).(*iampb.Policy)
		if !t.b.Apply(i, func() {
			for _, c := range w.Change {
				c.apply(cp)
			}
		}) {
			continue // its caller left
		}
		t.ran[i], ran = true, true
		work = cp
	}
	if !ran {
		return s, false, context.Canceled // every caller has given up
	}
	// Judged by what the changes leave, not by each one's report: a rule
	// added and removed again, or removed and added again in another
	// order of its lists, leaves the policy's rules as read, and nothing is
	// written (nor created).
	if sameRules(work.GetRules(), s.p.GetRules()) {
		return s, false, nil
	}
	return state{p: work, absent: s.absent}, true, nil
}

// sameRules reports whether a and b hold the same rules, in any order, each
// deny rule compared as Rule.Equal does (its lists as sets).
func sameRules(a, b []*iampb.PolicyRule) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, x := range a {
		found := false
		for j, y := range b {
			if !used[j] && sameRule(x, y) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func sameRule(x, y *iampb.PolicyRule) bool {
	rx, okx := RuleOf(x)
	ry, oky := RuleOf(y)
	if okx && oky {
		return rx.Equal(ry)
	}
	return proto.Equal(x, y)
}

func (t *txn) write(ctx context.Context, s state) (state, error) {
	t.updating = !s.absent
	var (
		op  operation
		err error
	)
	if s.absent {
		var cop *iamv2.CreatePolicyOperation
		cop, err = t.u.c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{Parent: t.parent, PolicyId: t.id, Policy: s.p}, noGAXRetry)
		if cop != nil {
			op = cop
		}
	} else {
		var uop *iamv2.UpdatePolicyOperation
		uop, err = t.u.c.UpdatePolicy(ctx, &iampb.UpdatePolicyRequest{Policy: s.p}, noGAXRetry)
		if uop != nil {
			op = uop
		}
	}
	if err != nil {
		t.b.Fail()
		t.refused = updaters.Splittable(err)
		return state{}, err
	}
	if op == nil {
		return state{}, status.Error(grpccodes.Internal, "the write answered no operation")
	}
	p, err := t.u.wait(ctx, t.deadline, op)
	if err != nil {
		t.b.Fail()
		t.refused = updaters.Splittable(err)
		return state{}, err
	}
	return state{p: p}, nil
}

// classify makes what CreateIfAbsent knows to be a concurrent change a
// conflict: a create that lost the race (ALREADY_EXISTS, which codes.CodeOf
// reads from a REST body that gax reports as ABORTED), and an update of a
// policy deleted since the read (NOT_FOUND).
func (t *txn) classify(err error) (codes.Class, bool) {
	if !t.u.create {
		return codes.Permanent, false
	}
	switch codes.CodeOf(err) {
	case grpccodes.AlreadyExists:
		return codes.Conflict, true
	case grpccodes.NotFound:
		if t.updating {
			return codes.Conflict, true
		}
	}
	return codes.Permanent, false
}

// operation is a long-running write: iam/apiv2's CreatePolicyOperation and
// UpdatePolicyOperation.
type operation interface {
	Poll(ctx context.Context, opts ...gax.CallOption) (*iampb.Policy, error)
	Done() bool
}

// wait polls op until it is done, within ctx. A poll is a read: one
// GetOperation call (none once the operation is done), never a repeat of
// the write. It returns the policy the operation answered, the
// operation's error (a stale etag among them), or the poll's failure.
//
// deadline is the caller's (Update's ctx's), zero for none: ctx may be
// shorter, the per-attempt timeout's, whose end is a cut, retried.
func (u *Updater) wait(ctx context.Context, deadline time.Time, op operation) (*iampb.Policy, error) {
	for n := 0; ; n++ {
		p, err := op.Poll(ctx, noGAXRetry)
		if err != nil {
			return nil, err
		}
		if op.Done() {
			if p == nil {
				return nil, status.Error(grpccodes.Internal, "the operation completed with no policy")
			}
			return p, nil
		}
		d := u.pollDelay(n)
		if !deadline.IsZero() && !u.clock.Now().Add(d).Before(deadline) {
			// As the engine, never start a wait that would end past the
			// caller's deadline (on the Retrier's clock, which may be a
			// test's): no poll could come in time.
			return nil, &waitError{err: context.DeadlineExceeded, late: true}
		}
		if err := u.clock.Sleep(ctx, d); err != nil {
			return nil, &waitError{err: err}
		}
	}
}

// waitError ends the wait for an operation when ctx ends (or the caller's
// deadline would pass before the next poll): its gRPC code is the
// context's, and it wraps the context's error.
type waitError struct {
	err  error
	late bool // the next poll would come after ctx's deadline
}

func (e *waitError) Error() string {
	if e.late {
		return "the operation was not done, and the next poll would come after the context's deadline"
	}
	return fmt.Sprintf("%v while waiting for the operation", e.err)
}

func (e *waitError) Unwrap() error { return e.err }

func (e *waitError) GRPCStatus() *status.Status {
	return status.New(status.FromContextError(e.err).Code(), e.Error())
}

// pollDelay is the wait after the n-th poll (from 0) that found the
// operation not done.
func (u *Updater) pollDelay(n int) time.Duration {
	limit := max(MaxPollInterval, u.poll)
	d := u.poll
	for range n {
		if d >= limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}
