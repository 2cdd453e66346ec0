package policy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

const res = "projects/p1"

func TestNewUpdaterRefuses(t *testing.T) {
	t.Parallel()
	if u, err := newUpdater(nil); err == nil || u != nil || !strings.Contains(err.Error(), "Client") {
		t.Fatalf("nil client: %v, %v", u, err)
	}
	if _, err := newUpdater(policy.FromConn(nil)); err == nil {
		t.Fatal("FromConn(nil) accepted")
	}
	if _, err := newUpdater(policy.FromAdmin(nil)); err == nil {
		t.Fatal("FromAdmin(nil) accepted")
	}
	e := newEnv(t)
	if _, err := newUpdater(e.client, interceptor.WithDeadline(-time.Second)); err == nil || !strings.Contains(err.Error(), "WithDeadline") {
		t.Fatalf("bad option: %v", err)
	}
	u, _ := updater(t, e.client)
	if _, err := u.Update(context.Background(), "", policy.AddBinding("roles/viewer", "user:a@example.com")); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("empty resource: %v", err)
	}
	if _, err := u.Update(context.Background(), res, nil); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("nil mutation: %v", err)
	}
}

// TestUpdateReadModifyWrite pins one Update: the read asks for version 3,
// the write carries the read etag, an explicit update_mask and the version.
func TestUpdateReadModifyWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seeded := e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/owner", Members: []string{"user:root@example.com"}}}})
	h := &hookClient{Client: e.client}
	u, clk := updater(t, h)

	got, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if n := h.getReqs[0].GetOptions().GetRequestedPolicyVersion(); n != 3 {
		t.Errorf("requested policy version %d, want 3", n)
	}
	w := h.lastSet(t)
	if string(w.Policy.Etag) != string(seeded.Etag) {
		t.Errorf("wrote etag %x, want the read one %x", w.Policy.Etag, seeded.Etag)
	}
	if !slices.Equal(w.UpdateMask.GetPaths(), []string{"bindings", "etag"}) {
		t.Errorf("update_mask %v", w.UpdateMask.GetPaths())
	}
	if w.Policy.Version != 1 {
		t.Errorf("wrote version %d, want 1 (no condition)", w.Policy.Version)
	}
	stored := e.srv.Policy(res)
	if !proto.Equal(got, stored) {
		t.Errorf("Update returned\n%v\nthe server holds\n%v", got, stored)
	}
	if m := members(stored, ""); m["user:a@example.com"] != 1 || m["user:root@example.com"] != 1 {
		t.Errorf("stored %v", stored)
	}
	if e.gets() != 1 || e.sets() != 1 || len(clk.Sleeps()) != 0 {
		t.Errorf("gets %d, sets %d, sleeps %v", e.gets(), e.sets(), clk.Sleeps())
	}
}

// TestNoOpWritesNothing: when no mutation changes anything, the read policy
// is returned and nothing is written.
func TestNoOpWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seeded := e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:a@example.com"}}}})
	u, _ := updater(t, e.client)
	got, err := u.Update(context.Background(), res,
		policy.AddBinding("roles/viewer", "user:A@example.com"),
		policy.RemoveBinding("roles/editor", "user:a@example.com"),
		policy.RemoveMember("user:nobody@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, seeded) {
		t.Fatalf("got %v, want the read policy %v", got, seeded)
	}
	if e.sets() != 0 || e.gets() != 1 {
		t.Fatalf("gets %d, sets %d", e.gets(), e.sets())
	}
}

// TestConditionsAndVersions: version 3 is written when a binding has a
// condition; conditional and unconditional bindings of a role stay distinct.
func TestConditionsAndVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	u, _ := updater(t, h)
	ctx := context.Background()
	cond := &expr.Expr{Title: "weekdays", Expression: "request.time.getDayOfWeek() < 5"}

	if _, err := u.Update(ctx, res, policy.AddBinding("roles/browser", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	if v := h.lastSet(t).Policy.Version; v != 1 {
		t.Fatalf("unconditional write has version %d", v)
	}
	got, err := u.Update(ctx, res, policy.AddConditionalBinding("roles/browser", "user:a@example.com", cond))
	if err != nil {
		t.Fatal(err)
	}
	if v := h.lastSet(t).Policy.Version; v != 3 {
		t.Fatalf("conditional write has version %d, want 3", v)
	}
	if got.Version != 3 || len(got.Bindings) != 2 {
		t.Fatalf("got %v", got)
	}
	// Reading it back needs version 3: the Updater asks for it.
	got, err = u.Update(ctx, res, policy.RemoveBinding("roles/browser", "user:a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bindings) != 1 || got.Bindings[0].Condition == nil || got.Version != 3 {
		t.Fatalf("the conditional grant should be all that is left: %v", got)
	}
	if v := h.lastSet(t).Policy.Version; v != 3 {
		t.Fatalf("write with a condition left has version %d", v)
	}
}

// TestAuditConfigsInMask: audit_configs is in the update_mask only when a
// mutation changed them.
func TestAuditConfigsInMask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	u, _ := updater(t, h)
	audit := func(p *iampb.Policy) (bool, error) {
		if len(p.AuditConfigs) > 0 {
			return false, nil
		}
		p.AuditConfigs = append(p.AuditConfigs, &iampb.AuditConfig{Service: "allServices",
			AuditLogConfigs: []*iampb.AuditLogConfig{{LogType: iampb.AuditLogConfig_DATA_READ}}})
		return true, nil
	}
	if _, err := u.Update(context.Background(), res, audit); err != nil {
		t.Fatal(err)
	}
	if p := h.lastSet(t).UpdateMask.GetPaths(); !slices.Equal(p, []string{"bindings", "etag", "audit_configs"}) {
		t.Fatalf("update_mask %v", p)
	}
	if len(e.srv.Policy(res).AuditConfigs) != 1 {
		t.Fatalf("audit config not stored: %v", e.srv.Policy(res))
	}
	if _, err := u.Update(context.Background(), res, audit, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	if p := h.lastSet(t).UpdateMask.GetPaths(); !slices.Equal(p, []string{"bindings", "etag"}) {
		t.Fatalf("update_mask %v", p)
	}
}

// TestConflictRerunsFromTheRead: ABORTED (another writer got in between the
// read and the write) waits the backoff and reruns the whole RMW; both
// changes land.
func TestConflictRerunsFromTheRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n == 1 { // a concurrent writer commits first
			e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
				{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
		}
		return nil
	}
	var seen []interceptor.Attempt
	u, clk := updater(t, h, interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { seen = append(seen, a) }))
	got, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if m := members(got, ""); m["user:a@example.com"] != 1 || m["user:other@example.com"] != 1 {
		t.Fatalf("lost a change: %v", got)
	}
	if e.gets() != 2 || e.sets() != 2 {
		t.Fatalf("gets %d, sets %d", e.gets(), e.sets())
	}
	if s := clk.Sleeps(); len(s) != 1 || s[0] < 50*time.Millisecond || s[0] >= 30*time.Second {
		t.Fatalf("sleeps %v, want one wait of the conflict schedule, in [50ms, 30s)", s)
	}
	if len(seen) != 2 || status.Code(seen[0].Err) != codes.Aborted || !seen[0].Retrying || seen[0].Method != policy.UpdateMethod || seen[0].Resource != res {
		t.Fatalf("observed %+v", seen)
	}
	if f := seen[1]; f.Reason != interceptor.Succeeded || f.Err != nil || f.N != 2 || f.Retrying || f.Method != policy.UpdateMethod || f.Resource != res {
		t.Fatalf("final report %+v, want Succeeded at attempt 2", f)
	}
}

// TestTransientFailuresRerun: UNAVAILABLE and INTERNAL on the read or the
// write rerun the RMW from the read.
func TestTransientFailuresRerun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	e.srv.FailNext(iamtest.MethodSetIamPolicy, 1, codes.Internal)
	u, clk := updater(t, e.client)
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
		t.Fatal(err)
	}
	if e.gets() != 3 || e.sets() != 2 || len(clk.Sleeps()) != 2 {
		t.Fatalf("gets %d, sets %d, sleeps %v", e.gets(), e.sets(), clk.Sleeps())
	}
	if m := members(e.srv.Policy(res), ""); m["user:a@example.com"] != 1 {
		t.Fatalf("stored %v", e.srv.Policy(res))
	}
}

// TestRetryDeadline: transient failures stop at the Retrier's deadline with
// the server's last error, code intact.
func TestRetryDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.FailNext(iamtest.MethodGetIamPolicy, 100, codes.Unavailable)
	u, clk := updater(t, e.client)
	_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), res) {
		t.Fatalf("err %v", err)
	}
	var total time.Duration
	for _, d := range clk.Sleeps() {
		total += d
	}
	if total > interceptor.DefaultDeadline || e.gets() < 5 || e.sets() != 0 {
		t.Fatalf("slept %v over %d gets, %d sets", total, e.gets(), e.sets())
	}
}

// TestLostAnswerExactlyOnce: the write commits but its answer is lost as
// UNAVAILABLE; the rerun reads the new policy, finds the change made, writes
// nothing and succeeds.
func TestLostAnswerExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
	u, _ := updater(t, e.client)
	got, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if e.sets() != 1 || e.gets() != 2 {
		t.Fatalf("gets %d, sets %d: the rerun must not write", e.gets(), e.sets())
	}
	if m := members(got, ""); len(m) != 1 || m["user:a@example.com"] != 1 || !proto.Equal(got, e.srv.Policy(res)) {
		t.Fatalf("got %v, stored %v", got, e.srv.Policy(res))
	}
}

// TestPermanentErrors: PERMISSION_DENIED on the read or the write returns
// at once, code intact, the resource in the message.
func TestPermanentErrors(t *testing.T) {
	t.Parallel()
	for _, method := range []iamtest.Method{iamtest.MethodGetIamPolicy, iamtest.MethodSetIamPolicy} {
		t.Run(string(method)[strings.LastIndex(string(method), "/")+1:], func(t *testing.T) {
			e := newEnv(t)
			e.srv.FailNext(method, 1, codes.PermissionDenied)
			u, clk := updater(t, e.client)
			_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("code %v: %v", status.Code(err), err)
			}
			if !strings.Contains(err.Error(), res) || !strings.Contains(status.Convert(err).Message(), res) {
				t.Fatalf("the resource is not named: %v", err)
			}
			if e.srv.CountCalls(method) != 1 || len(clk.Sleeps()) != 0 {
				t.Fatalf("%d calls, sleeps %v", e.srv.CountCalls(method), clk.Sleeps())
			}
		})
	}
}

// TestMutationError: a mutation's error fails the Update, is wrapped
// (errors.Is), and nothing is written.
func TestMutationError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client)
	boom := errors.New("boom")
	_, err := u.Update(context.Background(), res,
		policy.AddBinding("roles/viewer", "user:a@example.com"),
		func(*iampb.Policy) (bool, error) { return false, boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), res) || !strings.Contains(err.Error(), "mutation 2") {
		t.Fatalf("err %v", err)
	}
	if e.sets() != 0 {
		t.Fatalf("%d writes", e.sets())
	}
	// A status error from a mutation keeps its code, and is not retried.
	_, err = u.Update(context.Background(), res, func(*iampb.Policy) (bool, error) {
		return false, status.Error(codes.Unavailable, "not really")
	})
	if status.Code(err) != codes.Unavailable || e.gets() != 2 {
		t.Fatalf("err %v after %d gets", err, e.gets())
	}
}

// TestMutationPanic: a mutation's panic reaches its own caller.
func TestMutationPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client)
	defer func() {
		if r := recover(); r != "bad mutation" {
			t.Fatalf("recovered %v", r)
		}
		if e.sets() != 0 {
			t.Fatalf("%d writes", e.sets())
		}
	}()
	u.Update(context.Background(), res, func(*iampb.Policy) (bool, error) { panic("bad mutation") })
	t.Fatal("no panic")
}

// TestFailedPrecondition: FAILED_PRECONDITION on the write is a conflict
// only when a fresh read shows the etag moved.
func TestFailedPrecondition(t *testing.T) {
	t.Parallel()
	t.Run("etag moved: rerun", func(t *testing.T) {
		e := newEnv(t)
		h := &hookClient{Client: e.client}
		h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
			if n == 1 {
				e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
					{Role: "roles/editor", Members: []string{"user:other@example.com"}}}})
				e.srv.FailNext(iamtest.MethodSetIamPolicy, 1, codes.FailedPrecondition)
			}
			return nil
		}
		u, clk := updater(t, h)
		got, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
		if err != nil {
			t.Fatal(err)
		}
		if m := members(got, ""); m["user:a@example.com"] != 1 || m["user:other@example.com"] != 1 {
			t.Fatalf("got %v", got)
		}
		// read, write (refused), fresh read, backoff, read, write
		if e.gets() != 3 || e.sets() != 2 || len(clk.Sleeps()) != 1 {
			t.Fatalf("gets %d, sets %d, sleeps %v", e.gets(), e.sets(), clk.Sleeps())
		}
	})
	t.Run("etag unchanged: returned", func(t *testing.T) {
		e := newEnv(t)
		e.srv.FailNext(iamtest.MethodSetIamPolicy, 1, codes.FailedPrecondition)
		u, clk := updater(t, e.client)
		_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), res) {
			t.Fatalf("err %v", err)
		}
		if e.gets() != 2 || e.sets() != 1 || len(clk.Sleeps()) != 0 {
			t.Fatalf("gets %d, sets %d, sleeps %v", e.gets(), e.sets(), clk.Sleeps())
		}
	})
}

// TestPrincipalLimit: a change past 1,500 member entries is refused before
// anything is written; one that stays within, or shrinks an oversized
// policy, goes through.
func TestPrincipalLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	many := func(n int) []string {
		m := make([]string, n)
		for i := range m {
			m[i] = fmt.Sprintf("user:u%d@example.com", i)
		}
		return m
	}
	e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: many(1000)},
		{Role: "roles/editor", Members: many(499)}, // the same principals count again
	}})
	u, _ := updater(t, e.client)
	ctx := context.Background()
	_, err := u.Update(ctx, res, policy.AddBinding("roles/browser", "user:x@example.com"), policy.AddBinding("roles/browser", "user:y@example.com"))
	if !errors.Is(err, policy.ErrTooManyPrincipals) || status.Code(err) != codes.InvalidArgument ||
		!strings.Contains(err.Error(), "1501") || !strings.Contains(err.Error(), "1500") || !strings.Contains(err.Error(), res) {
		t.Fatalf("err %v", err)
	}
	if e.sets() != 0 {
		t.Fatalf("%d writes", e.sets())
	}
	if _, err := u.Update(ctx, res, policy.AddBinding("roles/browser", "user:x@example.com")); err != nil {
		t.Fatalf("the 1500th entry: %v", err)
	}
	// A policy already past the limit (read so, as if IAM held one): a
	// change that shrinks it is not refused here; the server has the last
	// word.
	over, _ := updater(t, &oversizedClient{Client: e.client, members: many(1600)})
	before := e.sets()
	_, err = over.Update(ctx, res, policy.RemoveMember("user:u0@example.com"))
	if errors.Is(err, policy.ErrTooManyPrincipals) || e.sets() != before+1 {
		t.Fatalf("shrinking was refused before the write: %v", err)
	}
}

// TestMemberCanonicalisationAgainstServer: a member already granted under
// another spelling is not granted again, and is removed under any spelling.
func TestMemberCanonicalisationAgainstServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.SeedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:Alice@Example.com", "deleted:user:bob@example.com?uid=123"}}}})
	u, _ := updater(t, e.client)
	ctx := context.Background()
	if _, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:alice@example.com")); err != nil || e.sets() != 0 {
		t.Fatalf("err %v, %d writes", err, e.sets())
	}
	got, err := u.Update(ctx, res,
		policy.RemoveBinding("roles/viewer", "user:ALICE@example.com"),
		policy.RemoveMember("deleted:user:Bob@Example.com?uid=123"))
	if err != nil || len(got.Bindings) != 0 {
		t.Fatalf("err %v, got %v", err, got)
	}
}

// TestContextCancelledDuringRMW: a lone caller's context ending mid-flight
// ends its Update at once with the context's error and code.
func TestContextCancelledDuringRMW(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	ctx, cancel := context.WithCancel(context.Background())
	h.beforeGet = func(c context.Context, n int) error {
		cancel()
		<-c.Done() // the batch context ends once its only caller gave up
		return c.Err()
	}
	u, _ := updater(t, h)
	_, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if !errors.Is(err, context.Canceled) || status.Code(err) != codes.Canceled || !strings.Contains(err.Error(), res) {
		t.Fatalf("err %v", err)
	}
	waitFor(t, "the committer to end", func() bool { return !policy.Busy(u, res) })
	if e.sets() != 0 {
		t.Fatalf("%d writes", e.sets())
	}
	// Already ended: nothing is even queued.
	if _, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com")); status.Code(err) != codes.Canceled {
		t.Fatalf("err %v", err)
	}
}

// noEtag answers policies without their etag.
type noEtag struct{ policy.Client }

func (c noEtag) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	p, err := c.Client.GetIamPolicy(ctx, req, opts...)
	if p != nil {
		p.Etag = nil
	}
	return p, err
}

// TestNoBlindOverwrite: a policy read without an etag is never written
// back (that would be a blind overwrite).
func TestNoBlindOverwrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, noEtag{e.client})
	_, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "blind overwrite") {
		t.Fatalf("err %v", err)
	}
	if e.sets() != 0 {
		t.Fatalf("%d writes", e.sets())
	}
}

// oversizedClient reads every policy with one roles/viewer binding of
// members in place of the stored bindings (the etag is the server's).
type oversizedClient struct {
	policy.Client
	members []string
}

func (c *oversizedClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	p, err := c.Client.GetIamPolicy(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	p.Bindings = []*iampb.Binding{{Role: "roles/viewer", Members: c.members}}
	return p, nil
}
