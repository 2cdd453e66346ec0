package policy_test

// The context forms of the per-call knobs on Update (interceptor.DisableContext,
// RetryNotFoundContext, DeadlineContext, MaxAttemptsContext): read by the
// engine after a failure, as on every face. On an Update, DisableContext
// stops the retries of transient failures, never the reruns after a
// conflict (the transaction itself).

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

func TestUpdateContextForms(t *testing.T) {
	t.Parallel()
	grant := policy.AddBinding("roles/viewer", "user:a@example.com")
	cases := []struct {
		name  string
		ctx   func(context.Context) context.Context
		fail  int // GetIamPolicy fails UNAVAILABLE this many times
		reads int // reads made
		ok    bool
	}{
		{"none", func(c context.Context) context.Context { return c }, 3, 4, true},
		{"DisableContext", interceptor.DisableContext, 3, 1, false},
		{"MaxAttemptsContext(2)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 2) }, 3, 2, false},
		// waits 1.5, 2.5, 4.5 (8.5 s); the next, 8.5 s, would end past 10 s
		{"DeadlineContext(10s)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 10*time.Second) }, 10, 4, false},
		{"DeadlineContext(0)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 0) }, 8, 9, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			u, _ := updater(t, e.client, interceptor.WithRandom(func() float64 { return 0.5 }), interceptor.WithoutRetryBudget())
			e.srv.FailNext(iamtest.MethodGetIamPolicy, c.fail, codes.Unavailable)
			_, err := u.Update(c.ctx(context.Background()), res, grant)
			if (err == nil) != c.ok {
				t.Fatalf("Update: %v, want success %v", err, c.ok)
			}
			if !c.ok && status.Code(err) != codes.Unavailable {
				t.Fatalf("Update: %v, want the server's UNAVAILABLE", err)
			}
			if n := e.gets(); n != c.reads {
				t.Fatalf("%d reads, want %d", n, c.reads)
			}
		})
	}
}

// TestUpdateDisableContextKeepsConflictReruns: DisableContext never stops
// the reruns after a concurrent change.
func TestUpdateDisableContextKeepsConflictReruns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, _ := updater(t, e.client)
	e.srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 2)
	got, err := u.Update(interceptor.DisableContext(context.Background()), res, policy.AddBinding("roles/viewer", "user:a@example.com"))
	if err != nil {
		t.Fatalf("Update under DisableContext with 2 conflicts: %v", err)
	}
	if members(got, "roles/viewer")["user:a@example.com"] != 1 {
		t.Fatalf("policy %v lacks the grant", got)
	}
	if n := e.sets(); n != 3 {
		t.Fatalf("%d writes, want 3 (2 conflicts, then the commit)", n)
	}
}

// TestUpdateRetryNotFoundContextRead: a policy read that answers NOT_FOUND (the
// resource not visible yet) is retried under RetryNotFoundContext, and
// returned at once without it.
func TestUpdateRetryNotFoundContextRead(t *testing.T) {
	t.Parallel()
	for _, opt := range []bool{true, false} {
		e := newEnv(t)
		u, _ := updater(t, e.client)
		e.srv.FailNext(iamtest.MethodGetIamPolicy, 2, codes.NotFound)
		ctx := context.Background()
		if opt {
			ctx = interceptor.RetryNotFoundContext(ctx)
		}
		_, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:a@example.com"))
		switch {
		case opt && (err != nil || e.gets() != 3):
			t.Fatalf("with RetryNotFoundContext: %v after %d reads; want success after 3", err, e.gets())
		case !opt && (status.Code(err) != codes.NotFound || e.gets() != 1):
			t.Fatalf("without: %v after %d reads; want NOT_FOUND after 1", err, e.gets())
		}
	}
}

// TestUpdateRetryNotFoundContextNewMember: a grant to a member not visible
// yet is rerun under RetryNotFoundContext, as with WithRetryNotFound.
func TestUpdateRetryNotFoundContextNewMember(t *testing.T) {
	t.Parallel()
	_, client, clk, member := newAccountEnv(t)
	u, err := newUpdater(client, interceptor.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Update(interceptor.RetryNotFoundContext(context.Background()), res, policy.AddBinding("roles/viewer", member)); err != nil {
		t.Fatalf("a grant to a new account under RetryNotFoundContext: %v", err)
	}
}
