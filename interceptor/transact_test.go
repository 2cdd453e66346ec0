package interceptor_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
)

// etagStore is a toy object guarded by an etag: a list of items whose etag
// moves on every write. Faults are queued per operation; log records what
// each call did.
type etagStore struct {
	mu    sync.Mutex
	etag  int
	items []string

	readFaults  []error // the next reads fail with these, in turn
	writeFaults []error // the next writes fail with these, in turn (nil: no fault)
	lose        int     // the next lose writes commit, then answer UNAVAILABLE
	steal       int     // before the next steal writes, another writer commits
	staleCode   grpccodes.Code
	log         []string
	readHook    func(ctx context.Context) error
}

type toyDoc struct {
	Etag  string
	Items []string
}

func (s *etagStore) Read(ctx context.Context) (*toyDoc, error) {
	if s.readHook != nil {
		if err := s.readHook(ctx); err != nil {
			s.record("read:" + codeName(err))
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.readFaults) > 0 {
		err := s.readFaults[0]
		s.readFaults = s.readFaults[1:]
		s.log = append(s.log, "read:"+codeName(err))
		return nil, err
	}
	s.log = append(s.log, "read")
	return &toyDoc{Etag: strconv.Itoa(s.etag), Items: slices.Clone(s.items)}, nil
}

func (s *etagStore) Write(_ context.Context, d *toyDoc) (*toyDoc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.steal > 0 {
		s.steal--
		s.etag++
		s.items = append(s.items, "other")
	}
	if len(s.writeFaults) > 0 {
		err := s.writeFaults[0]
		s.writeFaults = s.writeFaults[1:]
		if err != nil {
			s.log = append(s.log, "write:"+codeName(err))
			return nil, err
		}
	}
	if d.Etag != strconv.Itoa(s.etag) {
		code := s.staleCode
		if code == grpccodes.OK {
			code = grpccodes.Aborted
		}
		s.log = append(s.log, "write:"+code.String())
		return nil, status.Error(code, "stale etag")
	}
	s.etag++
	s.items = slices.Clone(d.Items)
	if s.lose > 0 {
		s.lose--
		s.log = append(s.log, "write:lost")
		return nil, status.Error(grpccodes.Unavailable, "the answer was lost")
	}
	s.log = append(s.log, "write")
	return &toyDoc{Etag: strconv.Itoa(s.etag), Items: slices.Clone(s.items)}, nil
}

func (s *etagStore) record(e string) {
	s.mu.Lock()
	s.log = append(s.log, e)
	s.mu.Unlock()
}

func (s *etagStore) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func codeName(err error) string { return codes.CodeOf(err).String() }

// add is the transaction that adds item to s, idempotently.
func (s *etagStore) add(item string) interceptor.ReadModifyWrite[*toyDoc] {
	return interceptor.ReadModifyWrite[*toyDoc]{
		Method:   "toy/Add",
		Resource: "doc",
		Read:     s.Read,
		Modify: func(d *toyDoc) (*toyDoc, bool, error) {
			if slices.Contains(d.Items, item) {
				return d, false, nil
			}
			d.Items = append(d.Items, item)
			return d, true, nil
		},
		Write: s.Write,
		Etag:  func(d *toyDoc) string { return d.Etag },
	}
}

func (s *etagStore) count(item string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, it := range s.items {
		if it == item {
			n++
		}
	}
	return n
}

var errDown = status.Error(grpccodes.Unavailable, "try again")

// TestTransactRerunsOnConflict: ABORTED reruns the whole from the read, on
// the conflict schedule; both changes are kept.
func TestTransactRerunsOnConflict(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{steal: 1}
	got, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Items, []string{"other", "a"}) {
		t.Fatalf("items %v", got.Items)
	}
	if want := []string{"read", "write:Aborted", "read", "write"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
	if w := h.clock.Sleeps(); !slices.Equal(w, []time.Duration{interceptor.ConflictDelay(interceptor.ScaledConflicts, 0, 0, 0.5)}) {
		t.Fatalf("waits %v", w)
	}
	if len(h.attempts) != 2 || h.attempts[0].Class != codes.Conflict || h.attempts[0].Method != "toy/Add" || h.attempts[0].Resource != "doc" || h.attempts[1].Reason != interceptor.Succeeded {
		t.Fatalf("attempts %+v", h.attempts)
	}
}

// TestTransactDocumentedConflicts: Conflicts chooses the schedule.
func TestTransactDocumentedConflicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{steal: 2}
	tx := s.add("a")
	tx.Conflicts = interceptor.DocumentedConflicts
	if _, err := interceptor.Transact(context.Background(), h.r, tx); err != nil {
		t.Fatal(err)
	}
	if w := h.clock.Sleeps(); !slices.Equal(w, secs(1.5, 2.5)) {
		t.Fatalf("waits %v", w)
	}
}

// TestTransactFailedPrecondition: a write refused FAILED_PRECONDITION is a
// conflict (rerun, reported ABORTED while wrapping the server's error) only
// when a fresh read shows the etag moved; otherwise the server's refusal,
// returned at once.
func TestTransactFailedPrecondition(t *testing.T) {
	t.Parallel()
	t.Run("etag moved", func(t *testing.T) {
		h := newHarness(t)
		s := &etagStore{steal: 1, staleCode: grpccodes.FailedPrecondition}
		if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
			t.Fatal(err)
		}
		if want := []string{"read", "write:FailedPrecondition", "read", "read", "write"}; !slices.Equal(s.calls(), want) {
			t.Fatalf("calls %v, want %v", s.calls(), want)
		}
		if a := h.attempts[0]; a.Class != codes.Conflict || status.Code(a.Err) != grpccodes.Aborted || codes.CodeOf(errors.Unwrap(a.Err)) != grpccodes.FailedPrecondition {
			t.Fatalf("first attempt %+v", a)
		}
	})
	t.Run("etag did not move", func(t *testing.T) {
		h := newHarness(t)
		refused := status.Error(grpccodes.FailedPrecondition, "the role is deleted")
		s := &etagStore{writeFaults: []error{refused}}
		_, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
		if err != refused {
			t.Fatalf("err %v, want the server's refusal unchanged", err)
		}
		if want := []string{"read", "write:FailedPrecondition", "read"}; !slices.Equal(s.calls(), want) {
			t.Fatalf("calls %v, want %v", s.calls(), want)
		}
	})
	t.Run("fresh read fails transiently", func(t *testing.T) {
		h := newHarness(t)
		refused := status.Error(grpccodes.FailedPrecondition, "stale")
		s := &etagStore{writeFaults: []error{refused}}
		n := 0
		s.readHook = func(context.Context) error {
			if n++; n == 2 {
				return errDown
			}
			return nil
		}
		if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
			t.Fatal(err)
		}
		if want := []string{"read", "write:FailedPrecondition", "read:Unavailable", "read", "write"}; !slices.Equal(s.calls(), want) {
			t.Fatalf("calls %v, want %v", s.calls(), want)
		}
	})
}

// TestTransactTransientFailuresReread: a transient failure of the read or
// the write reruns from a fresh read: a write is never sent again alone.
func TestTransactTransientFailuresReread(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{readFaults: []error{errDown}, writeFaults: []error{errDown}}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatal(err)
	}
	if want := []string{"read:Unavailable", "read", "write:Unavailable", "read", "write"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
	if w := h.clock.Sleeps(); !slices.Equal(w, secs(1.5, 2.5)) {
		t.Fatalf("waits %v, want the documented backoff's", w)
	}
}

// TestTransactLostAnswerAppliesOnce: a write that committed but whose
// answer was lost is followed by a read that finds the change made: nothing
// more is written, the change is there once.
func TestTransactLostAnswerAppliesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{lose: 1}
	got, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"read", "write:lost", "read"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
	if s.count("a") != 1 || !slices.Equal(got.Items, []string{"a"}) {
		t.Fatalf("items %v, result %v", s.items, got.Items)
	}
}

// TestTransactNoWriteWhenUnchanged: nothing changed, nothing written; the
// result is what Modify returned.
func TestTransactNoWriteWhenUnchanged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{items: []string{"a"}}
	got, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
	if err != nil || !slices.Equal(got.Items, []string{"a"}) {
		t.Fatalf("%v, %v", got, err)
	}
	if want := []string{"read"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
}

// TestTransactNoBlindOverwrite: an object read without an etag is never
// written.
func TestTransactNoBlindOverwrite(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{}
	tx := s.add("a")
	tx.Etag = func(*toyDoc) string { return "" }
	_, err := interceptor.Transact(context.Background(), h.r, tx)
	if status.Code(err) != grpccodes.FailedPrecondition || !strings.Contains(err.Error(), "blind overwrite") {
		t.Fatalf("err %v", err)
	}
	if want := []string{"read"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
}

// TestTransactDeadlineNeverOverslept: under endless conflicts or endless
// transient failures, no wait ends past the retry deadline.
func TestTransactDeadlineNeverOverslept(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"conflicts", "transient"} {
		t.Run(name, func(t *testing.T) {
			const deadline = 20 * time.Second
			h := newHarness(t, interceptor.WithDeadline(deadline))
			s := &etagStore{}
			if name == "conflicts" {
				s.steal = 1 << 20
			} else {
				s.readHook = func(context.Context) error { return errDown }
			}
			start := h.clock.Now()
			_, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
			if err == nil {
				t.Fatal("succeeded")
			}
			if d := h.clock.Since(start); d > deadline {
				t.Fatalf("ended after %v, past the %v deadline", d, deadline)
			}
			if last := h.attempts[len(h.attempts)-1]; last.Reason != interceptor.DeadlineReached {
				t.Fatalf("last attempt %+v", last)
			}
		})
	}
}

// TestTransactConflictsDoNotCountTowardMaxAttempts: a cap sized for single
// calls does not lose a change under contention; transient failures still
// count.
func TestTransactConflictsDoNotCountTowardMaxAttempts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithMaxAttempts(2))
	s := &etagStore{steal: 3, writeFaults: []error{nil, nil, nil, errDown}}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatalf("3 conflicts and 1 transient failure under WithMaxAttempts(2): %v", err)
	}
	h = newHarness(t, interceptor.WithMaxAttempts(2))
	s = &etagStore{steal: 1}
	s.writeFaults = []error{nil, errDown, errDown}
	_, err := interceptor.Transact(context.Background(), h.r, s.add("a"))
	if status.Code(err) != grpccodes.Unavailable || h.attempts[len(h.attempts)-1].Reason != interceptor.MaxAttempts {
		t.Fatalf("err %v, attempts %+v; want the cap to stop the second transient failure", err, h.attempts)
	}
}

// TestTransactModifyErrorAndPanic: Modify's error ends the transaction at
// once, unchanged, whatever the classifier says of it; its panic reaches
// the caller's goroutine.
func TestTransactModifyErrorAndPanic(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{}
	tx := s.add("a")
	tx.Modify = func(*toyDoc) (*toyDoc, bool, error) { return nil, false, errDown }
	if _, err := interceptor.Transact(context.Background(), h.r, tx); err != errDown {
		t.Fatalf("err %v", err)
	}
	if want := []string{"read"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v (Modify's error is never retried)", s.calls(), want)
	}
	tx.Modify = func(*toyDoc) (*toyDoc, bool, error) { panic("boom") }
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v", p)
		}
	}()
	interceptor.Transact(context.Background(), h.r, tx)
	t.Fatal("no panic")
}

// TestTransactCancelledDuringWait: the caller's context ends during a wait:
// the error has the context's code and wraps the last error.
func TestTransactCancelledDuringWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &etagStore{steal: 1}
	h.clock.OnSleep(func(time.Duration) { cancel() })
	_, err := interceptor.Transact(ctx, h.r, s.add("a"))
	if status.Code(err) != grpccodes.Canceled || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stale etag") {
		t.Fatalf("err %v", err)
	}
	if want := []string{"read", "write:Aborted"}; !slices.Equal(s.calls(), want) {
		t.Fatalf("calls %v, want %v", s.calls(), want)
	}
}

// TestTransactRetryInfo: the server's RetryInfo is the floor of a wait.
func TestTransactRetryInfo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st, err := status.New(grpccodes.Unavailable, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(9 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	s := &etagStore{writeFaults: []error{st.Err()}}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatal(err)
	}
	if w := h.clock.Sleeps(); !slices.Equal(w, secs(9)) {
		t.Fatalf("waits %v, want RetryInfo's 9s", w)
	}
}

// TestTransactClassifyPropagation: an error Classify makes Propagation is
// retried only with the 404 opt-in, per call (RetryNotFoundContext) or on
// the Retrier.
func TestTransactClassifyPropagation(t *testing.T) {
	t.Parallel()
	notYet := status.Error(grpccodes.InvalidArgument, "member does not exist")
	run := func(ctx context.Context, opts ...interceptor.Option) ([]string, error) {
		h := newHarness(t, opts...)
		s := &etagStore{writeFaults: []error{notYet}}
		tx := s.add("a")
		tx.Classify = func(err error) (codes.Class, bool) { return codes.Propagation, err == notYet }
		_, err := interceptor.Transact(ctx, h.r, tx)
		return s.calls(), err
	}
	if calls, err := run(context.Background()); err != notYet || len(calls) != 2 {
		t.Fatalf("without the opt-in: %v, calls %v", err, calls)
	}
	if calls, err := run(interceptor.RetryNotFoundContext(context.Background())); err != nil || len(calls) != 4 {
		t.Fatalf("RetryNotFoundContext: %v, calls %v", err, calls)
	}
	if calls, err := run(context.Background(), interceptor.WithRetryNotFound()); err != nil || len(calls) != 4 {
		t.Fatalf("WithRetryNotFound: %v, calls %v", err, calls)
	}
}

// TestTransactOwnsItsCalls: the context given to Read and Write is marked,
// so a Retrier's interceptor beneath passes their failures through: the
// server sees the attempts of one schedule.
func TestTransactOwnsItsCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	inv := &script{errs: []error{errDown, errDown}}
	ic := h.r.UnaryClientInterceptor()
	s := &etagStore{}
	s.readHook = func(ctx context.Context) error {
		return ic(ctx, getPolicy, nil, nil, nil, inv.invoke)
	}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatal(err)
	}
	if inv.calls != 3 || len(h.clock.Sleeps()) != 2 {
		t.Fatalf("%d server calls, waits %v; want 3 calls on one schedule of 2 waits", inv.calls, h.clock.Sleeps())
	}
}

// TestTransactPerAttemptTimeout: the Retrier's per-attempt timeout bounds
// each Read and Write call; a call it cuts off is rerun.
func TestTransactPerAttemptTimeout(t *testing.T) {
	t.Parallel()
	const d = 50 * time.Millisecond
	h := newHarness(t, interceptor.WithPerAttemptTimeout(d))
	s := &etagStore{}
	n := 0
	s.readHook = func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > d {
			t.Errorf("read %d: deadline %v (set %v); want within %v", n, time.Until(dl), ok, d)
		}
		if n++; n == 1 {
			<-ctx.Done() // hung: cut off by the timeout
			return status.FromContextError(ctx.Err()).Err()
		}
		return nil
	}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatal(err)
	}
	if c := s.calls(); c[0] != "read:DeadlineExceeded" || c[len(c)-1] != "write" {
		t.Fatalf("calls %v, want the hung read cut off, then a read and a write", c)
	}
}

// TestTransactRefusesBadInput: every missing piece is named, before any call.
func TestTransactRefusesBadInput(t *testing.T) {
	t.Parallel()
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	s := &etagStore{}
	_, err = interceptor.Transact(context.Background(), r, interceptor.ReadModifyWrite[*toyDoc]{Conflicts: 7})
	for _, w := range []string{"Method is empty", "Read is nil", "Modify is nil", "Write is nil", "Etag is nil", "Conflicts is ConflictBackoff(7)"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err %v; want it to name %q", err, w)
		}
	}
	for _, r := range []*interceptor.Retrier{nil, {}} {
		if _, err := interceptor.Transact(context.Background(), r, s.add("a")); err == nil || !strings.Contains(err.Error(), "Retrier") {
			t.Errorf("Retrier %v: %v", r, err)
		}
	}
	if len(s.calls()) != 0 {
		t.Fatalf("calls %v", s.calls())
	}
}

// TestTransactMetrics: writes and conflicts are counted by grpc.method:
// this library's read-modify-writes under their Method, a name of your own
// as "other".
func TestTransactMetrics(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withMeter())
	for _, method := range []string{"iamretry.policy/Update", "toy/Add"} {
		s := &etagStore{steal: 1}
		tx := s.add("a")
		tx.Method = method
		if _, err := interceptor.Transact(context.Background(), h.r, tx); err != nil {
			t.Fatal(err)
		}
	}
	ms := h.collect()
	for _, attr := range []string{"iamretry.policy/Update", "other"} {
		method := map[string]string{"grpc.method": attr}
		if n, ok := sum(t, ms, "iamretry.policy.update.writes", method); n != 2 {
			t.Errorf("%s: writes %d (found %v), want 2", attr, n, ok)
		}
		if n, ok := sum(t, ms, "iamretry.policy.update.conflicts", method); n != 1 {
			t.Errorf("%s: conflicts %d (found %v), want 1", attr, n, ok)
		}
		if n, ok := sum(t, ms, "iamretry.client.calls", method); n != 1 {
			t.Errorf("%s: calls %d (found %v), want 1", attr, n, ok)
		}
	}
}

// TestTransactSpanEventsGoToCallers: run for several callers (an Updater's
// coalesced batch: rmwhook.Run.Callers), each failed attempt's span event
// goes to the span of every caller it returns, not ctx's.
func TestTransactSpanEventsGoToCallers(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, nil, withSpans())
	tr := h.spans.tp.Tracer("test")
	c1, s1 := tr.Start(context.Background(), "caller 1")
	c2, s2 := tr.Start(context.Background(), "caller 2")
	batch, sb := tr.Start(context.Background(), "batch")
	s := &etagStore{steal: 1}
	tx := s.add("a")
	run := &rmwhook.Run{Callers: func() []context.Context { return []context.Context{c1, c2} }}
	if _, err := interceptor.Transact(rmwhook.With(batch, run), h.r, tx); err != nil {
		t.Fatal(err)
	}
	s1.End()
	s2.End()
	sb.End()
	for _, sp := range h.spans.exp.GetSpans() {
		want := 1
		if sp.Name == "batch" {
			want = 0
		}
		if len(sp.Events) != want || (want == 1 && sp.Events[0].Name != "iamretry.retry") {
			t.Errorf("span %s: events %+v, want %d iamretry.retry", sp.Name, sp.Events, want)
		}
	}
}

// TestTransactLongRunningWrite: a write that is a long-running operation (a
// deny policy's UpdatePolicy) waits for it inside Write. A poll that fails
// is a failure of the write: a fresh read finds the change made, nothing is
// written twice. A stale etag reported as the operation's error is a
// conflict: rerun from the read.
func TestTransactLongRunningWrite(t *testing.T) {
	t.Parallel()
	type op struct {
		done *toyDoc
		err  error
	}
	run := func(s *etagStore, polls []error) (*harness, error) {
		h := newHarness(t)
		tx := s.add("a")
		tx.Write = func(ctx context.Context, d *toyDoc) (*toyDoc, error) {
			// Start the operation: the server runs it (the store's write).
			var o op
			o.done, o.err = s.Write(ctx, d)
			// Wait for it: each poll is a read of the operation.
			for len(polls) > 0 {
				err := polls[0]
				polls = polls[1:]
				if err != nil {
					return nil, err
				}
			}
			return o.done, o.err
		}
		_, err := interceptor.Transact(context.Background(), h.r, tx)
		return h, err
	}
	s := &etagStore{}
	if _, err := run(s, []error{nil, errDown}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"read", "write", "read"}; !slices.Equal(s.calls(), want) || s.count("a") != 1 {
		t.Fatalf("a failed poll: calls %v, items %v; want %v and the change once", s.calls(), s.items, want)
	}
	s = &etagStore{steal: 1}
	if h, err := run(s, nil); err != nil || h.attempts[0].Class != codes.Conflict {
		t.Fatalf("a stale etag as the operation's error: %v, attempts %+v", err, h.attempts)
	}
	if s.count("a") != 1 || s.count("other") != 1 {
		t.Fatalf("items %v", s.items)
	}
}

// TestTransactEndedCountsCallers: run for several callers (rmwhook.Run
// with Ended), Transact counts no call of its own (a success at once, a
// success after a conflict) but still counts writes and conflicts; Ended
// gets how it ended, and Run.Record counts what it is given, once per
// caller. A probe runs nothing and says whether the Retrier retries
// NOT_FOUND.
func TestTransactEndedCountsCallers(t *testing.T) {
	h := newHarnessOf(t, nil, withMeter())
	method := map[string]string{"grpc.method": "iamretry.policy/Update"}
	var ends []rmwhook.End
	var record func(context.Context, string, rmwhook.End)
	for _, steal := range []int{0, 1} {
		s := &etagStore{steal: steal}
		tx := s.add("a")
		tx.Method = "iamretry.policy/Update"
		run := &rmwhook.Run{Ended: func(e rmwhook.End) { ends = append(ends, e) }}
		if _, err := interceptor.Transact(rmwhook.With(context.Background(), run), h.r, tx); err != nil {
			t.Fatal(err)
		}
		record = run.Record
	}
	if len(ends) != 2 || ends[0] != (rmwhook.End{Reason: uint8(interceptor.Succeeded)}) ||
		ends[1].Err != nil || ends[1].Retries != 1 || ends[1].Reason != uint8(interceptor.Succeeded) || ends[1].Waited <= 0 {
		t.Fatalf("Ended got %+v; want a success at once, then one after 1 retry and a wait", ends)
	}
	ms := h.collect()
	if n, ok := sum(t, ms, "iamretry.client.calls", method); n != 0 {
		t.Errorf("calls %d (found %v), want none: Ended counts them", n, ok)
	}
	if n, _ := sum(t, ms, "iamretry.policy.update.writes", method); n != 3 {
		t.Errorf("writes %d, want 3", n)
	}
	if n, _ := sum(t, ms, "iamretry.policy.update.conflicts", method); n != 1 {
		t.Errorf("conflicts %d, want 1", n)
	}
	for range 3 { // the second transaction ran for three callers
		record(context.Background(), "iamretry.policy/Update", ends[1])
	}
	record(context.Background(), "iamretry.policy/Update",
		rmwhook.End{Err: status.Error(grpccodes.InvalidArgument, "no"), Reason: uint8(interceptor.NotRetryable)})
	ms = h.collect()
	if n, _ := sum(t, ms, "iamretry.client.calls", method); n != 3 {
		t.Errorf("calls OK %d, want 3", n)
	}
	if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": "iamretry.policy/Update", "grpc.status": "INVALID_ARGUMENT"}); n != 1 {
		t.Errorf("calls INVALID_ARGUMENT %d, want 1", n)
	}
	s := &etagStore{}
	probe := &rmwhook.Run{Probe: true}
	if _, err := interceptor.Transact(rmwhook.With(context.Background(), probe), h.r, s.add("a")); err != nil || probe.Record == nil || probe.RetryNotFound {
		t.Fatalf("probe: %v, %+v", err, probe)
	}
	if len(s.calls()) != 0 {
		t.Fatalf("a probe made calls %v", s.calls())
	}
	probe = &rmwhook.Run{Probe: true}
	if _, err := interceptor.Transact(rmwhook.With(context.Background(), probe), newHarness(t, interceptor.WithRetryNotFound()).r, s.add("a")); err != nil || probe.Record != nil || !probe.RetryNotFound {
		t.Fatalf("probe WithRetryNotFound: %v, %+v", err, probe)
	}
}

// TestTransactScalesConflictWaitsToItsReruns (issue 28): the default
// schedule's first wait uses w = 100 ms (the first attempt is not timed);
// each later one the duration of the rerun that conflicted, as the
// Retrier's clock measured it.
func TestTransactScalesConflictWaitsToItsReruns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &etagStore{steal: 3}
	s.readHook = func(context.Context) error {
		h.clock.Advance(300 * time.Millisecond) // each read takes 300 ms
		return nil
	}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
		t.Fatal(err)
	}
	got := h.clock.Sleeps()
	if len(got) != 3 {
		t.Fatalf("waits %v, want 3", got)
	}
	w0 := interceptor.ConflictDelay(interceptor.ScaledConflicts, 0, 0, 0.5)
	since := w0 + 300*time.Millisecond
	w1 := interceptor.ConflictDelayTook(interceptor.ScaledConflicts, 1, since, 300*time.Millisecond, 0.5, 60*time.Second-since)
	since += w1 + 300*time.Millisecond
	w2 := interceptor.ConflictDelayTook(interceptor.ScaledConflicts, 2, since, 300*time.Millisecond, 0.5, 60*time.Second-since)
	if want := []time.Duration{w0, w1, w2}; !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v (w = 100 ms, then 300 ms)", got, want)
	}
	if w1 == interceptor.ConflictDelayTook(interceptor.ScaledConflicts, 1, since, 0, 0.5, 0) {
		t.Fatal("the later wait does not depend on the measured rerun")
	}
}

// TestTransactKindsHaveTheirOwnExponents (issue 28): conflicts do not
// advance the transient backoff, nor transient failures the conflict
// schedule: after three conflicts a read's UNAVAILABLE waits the first
// step, 1.5 s; and on DocumentedConflicts the first conflict after two
// transient failures waits the first step too.
func TestTransactKindsHaveTheirOwnExponents(t *testing.T) {
	t.Parallel()
	unavailable := status.Error(grpccodes.Unavailable, "down")
	t.Run("conflicts then a transient failure", func(t *testing.T) {
		h := newHarness(t)
		s := &etagStore{steal: 3}
		reads := 0
		s.readHook = func(context.Context) error {
			reads++
			if reads == 4 {
				return unavailable
			}
			return nil
		}
		if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); err != nil {
			t.Fatal(err)
		}
		got := h.clock.Sleeps()
		if len(got) != 4 || got[3] != 1500*time.Millisecond {
			t.Fatalf("waits %v, want three conflict waits then 1.5s", got)
		}
	})
	t.Run("transient failures then a conflict, documented", func(t *testing.T) {
		h := newHarness(t)
		s := &etagStore{readFaults: []error{unavailable, unavailable}, steal: 1}
		tx := s.add("a")
		tx.Conflicts = interceptor.DocumentedConflicts
		if _, err := interceptor.Transact(context.Background(), h.r, tx); err != nil {
			t.Fatal(err)
		}
		if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 1.5); !slices.Equal(got, want) {
			t.Fatalf("waits %v, want %v", got, want)
		}
	})
}

// TestTransactFitsItsLastRetries (issue 28): a transient wait of a
// read-modify-write that would end past the deadline is not the end while
// time is left: the retries halve what is left, no closer than the
// Backoff's Initial apart; the interceptor's call ends instead.
func TestTransactFitsItsLastRetries(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	faults := make([]error, 20)
	for i := range faults {
		faults[i] = status.Error(grpccodes.Unavailable, "down")
	}
	s := &etagStore{readFaults: faults}
	if _, err := interceptor.Transact(context.Background(), h.r, s.add("a")); status.Code(err) != grpccodes.Unavailable {
		t.Fatalf("err %v, want the last UNAVAILABLE", err)
	}
	// 33.5 s of the documented waits; 32.5 s more would end past 60 s, so
	// half of the 26.5 s left, and so on while half is at least 1 s.
	want := secs(1.5, 2.5, 4.5, 8.5, 16.5, 13.25, 6.625, 3.3125, 1.65625)
	if got := h.clock.Sleeps(); !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	if a := h.attempts[len(h.attempts)-1]; a.Reason != interceptor.DeadlineReached {
		t.Fatalf("last attempt %+v, want DeadlineReached", a)
	}
	h = newHarness(t)
	sc := &script{errs: fail(grpccodes.Unavailable, 20)}
	_ = h.call(context.Background(), sc, getPolicy, nil)
	if got, want := h.clock.Sleeps(), secs(1.5, 2.5, 4.5, 8.5, 16.5); !slices.Equal(got, want) {
		t.Fatalf("interceptor waits %v, want %v", got, want)
	}
}
