package interceptor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
	"github.com/iamretry/iamretry/internal/googleerr"
)

// ReadModifyWrite is one change of an object guarded by an etag (an IAM
// allow policy, a custom role, a deny policy, or an object of your own), as
// Transact runs it: read the object, modify it, write it back with the etag
// read. T is what Read returns and Write takes: the object (a proto message
// pointer, say), or a value of your own that carries it.
type ReadModifyWrite[T any] struct {
	// Method names the transaction: the Method of its Attempts and the
	// method the Retrier's classifier is given. Its metrics count it under
	// grpc.method "other" (see WithMeterProvider: this library's own
	// read-modify-writes, policy.UpdateMethod, role.UpdateMethod and deny.UpdateMethod, have
	// values of their own); give it a name of your own, not a gRPC
	// method's, whose calls the interceptor beneath counts. Required.
	Method string
	// Resource is the Resource of its Attempts (the object's name); may be "".
	Resource string

	// Read reads the object. It must pass ctx on (an interceptor or
	// RoundTripper beneath then leaves the retries to Transact) and turn
	// its client's own retries off (gax.WithRetry(nil) on a GAPIC call).
	// Each attempt starts with it; within an attempt, it is called once
	// more right after a write refused FAILED_PRECONDITION, for the fresh
	// read that judges the refusal (see Etag). Required.
	Read func(ctx context.Context) (T, error)
	// Modify applies the change to what Read returned and returns the value
	// to write and whether it changed anything. It may change v in place
	// and return it. It must be idempotent: applied to an object that holds
	// the change already it reports no change (so a write whose answer was
	// lost is not applied twice: the rerun finds the work done and writes
	// nothing). Its error ends the transaction at once, unchanged, and is
	// never retried; a panic in it reaches Transact's caller. Required.
	Modify func(v T) (T, bool, error)
	// Write writes what Modify returned, with the etag read (the etag is
	// what makes a concurrent change fail instead of being overwritten),
	// and returns the object as written. It is called only when Modify
	// changed something. It must pass ctx on and turn its client's retries
	// off, as Read. A long-running write (a deny policy's UpdatePolicy)
	// waits for its operation within ctx: a failed poll is a failure of the
	// write, and a stale etag reported as the operation's error is a
	// conflict as it is from the call. Required.
	Write func(ctx context.Context, v T) (T, error)
	// Etag returns the etag of what Read returned ("" for none: such an
	// object is never written, that would be a blind overwrite). A write
	// refused FAILED_PRECONDITION is a conflict only when a fresh read
	// shows the etag moved. To create an object that is absent, have Read
	// return a value that says so, Etag a token of your own for it
	// ("absent"), Write create it, and Classify make the create's
	// ALREADY_EXISTS (a concurrent create) codes.Conflict. Required.
	Etag func(v T) string

	// Conflicts is the schedule of the reruns after a conflict (default
	// ScaledConflicts).
	Conflicts ConflictBackoff
	// Classify, when set, classifies an error of Read or Write before the
	// Retrier's classifier does; ok false leaves it to the classifier. It
	// lets a transaction retry what only it knows to be retryable: an
	// error it makes Propagation is retried with the 404 opt-in
	// (WithRetryNotFound, RetryNotFoundContext), as NOT_FOUND is, with its
	// code unchanged for observers and metrics.
	Classify func(err error) (class codes.Class, ok bool)
}

// Transact runs t on r's engine as a retried transaction, the IAM guidance's
// "retry the entire read-modify-write": it reads, applies Modify, writes
// with the etag read only when something changed, and returns what Write
// returned (or Modify, when nothing changed). After a conflict (ABORTED;
// FAILED_PRECONDITION: see Etag) it reruns the whole from the read on
// t.Conflicts' schedule, outside the budget and the attempt cap; after a
// Transient failure of the read or the write, on r's Backoff. All else is
// r's, as on every face. It owns Read and Write (their ctx is marked): do
// not nest owners. It returns the last error or Modify's unchanged, or, when
// ctx ends during a wait, an error with the context's code wrapping the last
// error; with the zero T. A nil or unbuilt r, a missing field and an unknown
// Conflicts are refused with an error naming each, before any call.
func Transact[T any](ctx context.Context, r *Retrier, t ReadModifyWrite[T]) (T, error) {
	var zero T
	if err := t.check(r); err != nil {
		return zero, err
	}
	x := &txn[T]{r: r, t: t}
	x.j = job{
		method:      t.Method,
		resource:    t.Resource,
		rmw:         rmwJob{on: true, schedule: t.Conflicts},
		deadline:    r.cfg.deadline,
		maxAttempts: r.cfg.maxAttempts,
		perAttempt:  r.cfg.perAttempt,
		judge:       x.judge,
	}
	if r.cfg.perAttempt > 0 {
		x.j.cut = x.wasCut
	}
	if run := rmwhook.Of(ctx); run != nil && r.coalesced(run, &x.j) {
		return zero, nil
	}
	if err := r.do(ctx, &x.j, x.attempt); err != nil {
		return zero, err
	}
	return x.result, nil
}

// check refuses what Transact cannot run, naming each.
func (t *ReadModifyWrite[T]) check(r *Retrier) error {
	var errs []error
	if r == nil {
		errs = append(errs, errors.New("the Retrier is nil"))
	} else if !r.built() {
		errs = append(errs, errNotBuilt)
	}
	if t.Method == "" {
		errs = append(errs, errors.New("Method is empty: name the transaction (its observers and metrics need it)"))
	}
	if t.Read == nil {
		errs = append(errs, errors.New("Read is nil"))
	}
	if t.Modify == nil {
		errs = append(errs, errors.New("Modify is nil"))
	}
	if t.Write == nil {
		errs = append(errs, errors.New("Write is nil"))
	}
	if t.Etag == nil {
		errs = append(errs, errors.New("Etag is nil"))
	}
	if !t.Conflicts.known() {
		errs = append(errs, fmt.Errorf("Conflicts is %v: unknown schedule; use ScaledConflicts, SpreadConflicts or DocumentedConflicts", t.Conflicts))
	}
	if len(errs) == 0 {
		return nil
	}
	for i, e := range errs {
		errs[i] = fmt.Errorf("iamretry: Transact(%s): %w", t.Method, e)
	}
	return errors.Join(errs...)
}

// txn is one Transact call: the engine runs its attempts and asks its judge
// one after another, on the caller's goroutine.
type txn[T any] struct {
	r      *Retrier
	t      ReadModifyWrite[T]
	j      job
	result T
	// own: the attempt failed by Transact's or Modify's own doing (Modify's
	// error, a read without an etag): Permanent, whatever the classifier
	// says of it.
	own bool
	cut bool // a Read or Write of the last attempt ran out of the per-attempt timeout
}

// attempt is one read-modify-write.
func (x *txn[T]) attempt(ctx context.Context) error {
	x.own, x.cut = false, false
	return x.run(ctx)
}

func (x *txn[T]) run(ctx context.Context) error {
	v, err := call(x, ctx, x.t.Read)
	if err != nil {
		return err
	}
	etag := x.t.Etag(v)
	w, changed, err := x.t.Modify(v)
	if err != nil {
		x.own = true
		return err
	}
	if !changed {
		x.result = w
		return nil
	}
	if etag == "" {
		x.own = true
		return status.Errorf(grpccodes.FailedPrecondition,
			"iamretry: Transact(%s): the read answered %s without an etag; writing it would be a blind overwrite, so nothing was written", x.t.Method, x.what())
	}
	if x.r.m != nil {
		x.r.m.write(ctx, x.t.Method)
	}
	out, err := call(x, ctx, func(ctx context.Context) (T, error) { return x.t.Write(ctx, w) })
	if err != nil {
		if codes.CodeOf(err) == grpccodes.FailedPrecondition {
			return x.precondition(ctx, etag, err)
		}
		return err
	}
	x.result = out
	return nil
}

func (x *txn[T]) what() string {
	if x.t.Resource != "" {
		return x.t.Resource
	}
	return "an object"
}

// precondition decides what a FAILED_PRECONDITION answer to the write
// means: some services answer a stale etag with it. It is a conflict only
// when a fresh read shows the etag moved; a transient failure of that read
// reruns the transaction (from another read); otherwise it is the server's
// refusal, returned as it is.
func (x *txn[T]) precondition(ctx context.Context, etag string, werr error) error {
	fresh, err := call(x, ctx, x.t.Read)
	if err != nil {
		if x.cut || x.r.cfg.classify(x.t.Method, err) == codes.Transient {
			return err
		}
		return werr
	}
	if x.t.Etag(fresh) != etag {
		return &conflictError{err: werr}
	}
	return werr
}

// call runs f, a Read or a Write, under the engine's per-attempt timeout
// when the Retrier has one (attemptTimeout), and notes whether it cut f off
// (ownDeadline.ranOut), as for the attempt of a gRPC call.
func call[T any](x *txn[T], ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	d := x.r.attemptTimeout(&x.j)
	if d <= 0 {
		return f(ctx)
	}
	cctx, cancel, own := attemptDeadline(ctx, d)
	defer cancel()
	v, err := f(cctx)
	if own.ranOut(ctx, err) {
		x.cut = true
	}
	return v, err
}

func (x *txn[T]) wasCut() bool { return x.cut }

// judge classifies what only the transaction knows: its own failures are
// Permanent; t.Classify comes next; the rest is the Retrier's classifier's.
func (x *txn[T]) judge(err error) (codes.Class, bool) {
	if x.own {
		return codes.Permanent, true
	}
	if x.t.Classify != nil {
		return x.t.Classify(err)
	}
	return codes.Permanent, false
}

// conflictError is a FAILED_PRECONDITION answer to a write that a fresh
// read showed to be a concurrent change (the etag moved): it is rerun as an
// ABORTED would be, and reports ABORTED (with the server's details, its
// RetryInfo among them) while wrapping the server's error.
type conflictError struct{ err error }

func (e *conflictError) Error() string {
	return fmt.Sprintf("concurrent change (the etag moved since the read): %v", e.err)
}

func (e *conflictError) Unwrap() error { return e.err }

func (e *conflictError) GRPCStatus() *status.Status {
	p := status.New(grpccodes.Aborted, e.Error()).Proto()
	if st := googleerr.StatusAs(e.err); st != nil {
		p.Details = st.Proto().GetDetails()
	}
	return status.FromProto(p)
}

// What the engine knows of a read-modify-write: the reruns after a conflict
// (their schedule, their count), the callers whose spans get the events,
// and the writes and conflicts counted. Nothing else of the engine names
// Transact.

// rmwJob is the read-modify-write's part of a job; zero (off) on the other
// faces, which never rerun after a conflict.
type rmwJob struct {
	on       bool            // the job reruns after a Conflict
	schedule ConflictBackoff // the schedule of those reruns
	// reruns counts them: they do not count toward maxAttempts.
	reruns int
	// conflicts is the index into the schedule: the conflicts whose wait
	// it gave so far.
	conflicts int
	// first is when the call's first conflict was seen (the schedule
	// counts from it); zero before it.
	first time.Time
	// took is how long the last rerun took, read to last answer, at least
	// minRMW (the engine times each rerun); 0 for the first attempt, which
	// is not timed. ScaledConflicts scales its waits to it.
	took time.Duration
	// ended, when set, is given the call's end instead of the metrics (a
	// coalesced Updater batch: rmwhook.Run.Ended).
	ended func(rmwhook.End)
}

// conflictWait is the wait before the rerun after a conflict seen at now,
// on j's own schedule: counted in conflicts from the first one (transient
// failures do not advance it), scaled to how long the rerun that conflicted
// took.
func (r *Retrier) conflictWait(ctx context.Context, j *job, start, now time.Time) time.Duration {
	x := &j.rmw
	if x.conflicts == 0 {
		x.first = now
	}
	c := &r.cfg
	wait := x.schedule.delay(c.backoff, x.conflicts, now.Sub(x.first), x.took, c.random(), j.room(ctx, start, now))
	x.conflicts++
	return wait
}

// The instruments of read-modify-writes (WithMeterProvider documents them).
const (
	metricWrites    = "iamretry.policy.update.writes"
	metricConflicts = "iamretry.policy.update.conflicts"
)

// rmwMetrics are the instruments of read-modify-writes.
type rmwMetrics struct {
	writes    metric.Int64Counter
	conflicts metric.Int64Counter
}

// make creates the instruments on meter, returning their errors.
func (x *rmwMetrics) make(meter metric.Meter) []error {
	var e1, e2 error
	x.writes, e1 = meter.Int64Counter(metricWrites,
		metric.WithUnit("{write}"),
		metric.WithDescription("Writes made by read-modify-writes (SetIamPolicy calls of policy Updaters)."))
	x.conflicts, e2 = meter.Int64Counter(metricConflicts,
		metric.WithUnit("{conflict}"),
		metric.WithDescription("Read-modify-writes rerun after a concurrent change."))
	return []error{e1, e2}
}

// write counts one write of a read-modify-write (Transact) named method.
func (m *metrics) write(ctx context.Context, method string) {
	m.rmw.writes.Add(ctx, 1, m.statsFor(method).plain...)
}

// conflict counts one rerun after a concurrent change of method.
func (m *metrics) conflict(ctx context.Context, method string) {
	m.rmw.conflicts.Add(ctx, 1, m.statsFor(method).plain...)
}
