package deny_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/type/expr"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestAddAndRemoveRules: a rule is added once; adding it again (its lists
// in another order, with repeats) writes nothing; removing it removes it;
// removing an absent one writes nothing. Other rules and the display name
// are kept.
func TestAddAndRemoveRules(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil)
			e.seed(rule(0))
			ctx := context.Background()
			b := deny.Rule{
				Description:          "no role deletion",
				DeniedPrincipals:     []string{"principalSet://goog/group/contractors@example.com", "principal://goog/subject/bob@example.com"},
				ExceptionPrincipals:  []string{"principal://goog/subject/admin@example.com"},
				DeniedPermissions:    []string{"iam.googleapis.com/roles.delete", "iam.googleapis.com/roles.update"},
				ExceptionPermissions: []string{"iam.googleapis.com/roles.update"},
				Condition:            &expr.Expr{Expression: `resource.matchTag("12345/env", "prod")`},
			}
			p, err := e.u.Update(ctx, policyName, deny.AddRule(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.GetRules()) != 2 || e.count(b) != 1 || e.count(rule(0)) != 1 || p.GetDisplayName() != "guardrails" {
				t.Fatalf("after add: %v", p)
			}
			writes := e.srv.CountCalls(iamtest.MethodUpdatePolicy)

			again := b
			again.DeniedPrincipals = []string{"principal://goog/subject/bob@example.com", "principalSet://goog/group/contractors@example.com", "principal://goog/subject/bob@example.com"}
			again.DeniedPermissions = []string{"iam.googleapis.com/roles.update", "iam.googleapis.com/roles.delete"}
			again.Condition = &expr.Expr{Expression: `resource.matchTag("12345/env", "prod")`}
			if _, err := e.u.Update(ctx, policyName, deny.AddRule(again), deny.RemoveRule(rule(7))); err != nil {
				t.Fatal(err)
			}
			if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); n != writes {
				t.Fatalf("adding a rule that is there (lists as sets) wrote: %d UpdatePolicy calls, want %d", n, writes)
			}

			other := b
			other.Condition = nil // another rule: the conditions differ
			if _, err := e.u.Update(ctx, policyName, deny.AddRule(other)); err != nil {
				t.Fatal(err)
			}
			if e.count(other) != 1 || e.count(b) != 1 {
				t.Fatal("a rule differing in its condition alone was not added beside the first")
			}

			p, err = e.u.Update(ctx, policyName, deny.RemoveRule(again), deny.RemoveRule(other))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.GetRules()) != 1 || e.count(rule(0)) != 1 {
				t.Fatalf("after remove: %v", p)
			}
		})
	}
}

// TestFaultsAndLostAnswers: transient failures of the read, the write and
// the poll, and a write whose answer was lost, end with the rule written
// once; every UpdatePolicy follows a GetPolicy of its own (never a lone
// replay).
func TestFaultsAndLostAnswers(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil)
			e.seed(rule(0))
			e.srv.FailNext(iamtest.MethodGetPolicy, 1, grpccodes.Unavailable)
			e.srv.FailNext(iamtest.MethodUpdatePolicy, 1, grpccodes.Internal)
			e.srv.LoseNextAnswers(iamtest.MethodUpdatePolicy, 1)
			if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1))); err != nil {
				t.Fatal(err)
			}
			if e.count(rule(1)) != 1 {
				t.Fatalf("rule written %d times", e.count(rule(1)))
			}
			var seq []string
			for _, c := range e.srv.Calls() {
				seq = append(seq, string(c.Method[len("/google.iam.v2.Policies/"):])+":"+c.Code.String())
			}
			want := []string{"GetPolicy:Unavailable", "GetPolicy:OK", "UpdatePolicy:Internal", "GetPolicy:OK", "UpdatePolicy:Unavailable", "GetPolicy:OK"}
			if !slices.Equal(seq, want) {
				t.Fatalf("calls %v, want %v", seq, want)
			}
			if e.applied(iamtest.MethodUpdatePolicy) != 1 {
				t.Fatalf("%d UpdatePolicy calls applied, want 1", e.applied(iamtest.MethodUpdatePolicy))
			}
		})
	}
}

// TestOperationDelay: the update's operation completes 45 s later on the
// fake's clock; the Updater polls it (1 s, 2 s, 4 s, ... apart) on the
// virtual clock and returns the policy written, in no real time. A failed
// poll is a failed write: the fresh read and a new write follow, and the
// overtaken second operation is a conflict; the rule lands once.
func TestOperationDelay(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil)
			e.seed(rule(0))
			e.srv.SetDenyOperationDelay(45 * time.Second)
			start := e.clock.Now()
			p, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1)))
			if err != nil {
				t.Fatal(err)
			}
			if e.count(rule(1)) != 1 || len(p.GetRules()) != 2 {
				t.Fatalf("policy %v", p)
			}
			if d := e.clock.Since(start); d < 45*time.Second || d > 65*time.Second {
				t.Fatalf("took %v of virtual time, want the 45 s of the operation and at most one poll interval more", d)
			}
			// Polls at 0, 1, 3, 7, 15, 31, 63 s: the last finds it done.
			if n := e.srv.CountCalls(iamtest.MethodGetOperation); n != 7 {
				t.Fatalf("%d polls, want 7", n)
			}

			e.srv.ResetCalls()
			e.srv.FailNext(iamtest.MethodGetOperation, 1, grpccodes.Unavailable)
			if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(2))); err != nil {
				t.Fatal(err)
			}
			if e.count(rule(2)) != 1 {
				t.Fatalf("rule written %d times", e.count(rule(2)))
			}
			if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); n != 2 {
				t.Fatalf("%d UpdatePolicy calls, want 2 (the first's poll failed)", n)
			}
		})
	}
}

// TestStaleEtagInOperation: a concurrent change that IAM reports as the
// operation's error (not the call's) is a conflict: the Updater reruns
// from a fresh read, on the conflict schedule, and both changes are kept.
func TestStaleEtagInOperation(t *testing.T) {
	for _, tr := range transports {
		for _, code := range []grpccodes.Code{grpccodes.Aborted, grpccodes.FailedPrecondition} {
			t.Run(tr+"/"+code.String(), func(t *testing.T) {
				e := newEnv(t, tr, nil)
				e.seed(rule(0))
				e.srv.SetDenyStaleEtagInOperation(true)
				e.srv.SetStaleEtagCode(code)
				e.srv.ConcurrentWriteNext(iamtest.MethodUpdatePolicy, 1)
				if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1))); err != nil {
					t.Fatal(err)
				}
				if e.count(rule(1)) != 1 || e.count(rule(0)) != 1 {
					t.Fatal("a change was lost or doubled")
				}
				// Two UpdatePolicy calls, one applied: the first one's
				// operation failed (iamtest's Call.Applied follows it).
				if n, a := e.srv.CountCalls(iamtest.MethodUpdatePolicy), e.applied(iamtest.MethodUpdatePolicy); n != 2 || a != 1 {
					t.Fatalf("%d UpdatePolicy calls, %d applied; want 2, 1", n, a)
				}
				e.mu.Lock()
				defer e.mu.Unlock()
				if len(e.attempts) == 0 || e.attempts[0].Class != codes.Conflict || status.Code(e.attempts[0].Err) != grpccodes.Aborted ||
					e.attempts[0].Method != deny.UpdateMethod || e.attempts[0].Resource != policyName {
					t.Fatalf("attempts %+v, want a conflict first", e.attempts)
				}
			})
		}
	}
}

// TestStaleEtagAtTheCall: the same race reported by the call (the default)
// is a conflict too.
func TestStaleEtagAtTheCall(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil)
			e.seed(rule(0))
			e.srv.ConcurrentWriteNext(iamtest.MethodUpdatePolicy, 2)
			if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1))); err != nil {
				t.Fatal(err)
			}
			if e.count(rule(1)) != 1 {
				t.Fatal("the rule did not land once")
			}
			if n := e.srv.CountCalls(iamtest.MethodGetPolicy); n != 3 {
				t.Fatalf("%d reads, want 3 (one per attempt)", n)
			}
		})
	}
}
