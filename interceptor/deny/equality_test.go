package deny_test

import (
	"context"
	"testing"

	"google.golang.org/genproto/googleapis/type/expr"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestRuleSetEquality tries to break Rule's equality: lists compared as sets
// (order, repeats, nil against empty), the description exactly, conditions
// as protos (nil equals only nil; a title is part of the condition).
func TestRuleSetEquality(t *testing.T) {
	base := deny.Rule{
		Description:          "d",
		DeniedPrincipals:     []string{"principal://goog/subject/a@example.com", "principal://goog/subject/b@example.com"},
		ExceptionPrincipals:  nil,
		DeniedPermissions:    []string{"iam.googleapis.com/roles.delete"},
		ExceptionPermissions: []string{},
		Condition:            &expr.Expr{Expression: `resource.matchTag("1/env", "prod")`},
	}
	mod := func(f func(r *deny.Rule)) deny.Rule {
		r := base
		f(&r)
		return r
	}
	equal := map[string]deny.Rule{
		"order":         mod(func(r *deny.Rule) { r.DeniedPrincipals = []string{base.DeniedPrincipals[1], base.DeniedPrincipals[0]} }),
		"repeats":       mod(func(r *deny.Rule) { r.DeniedPrincipals = append(r.DeniedPrincipals[:2:2], base.DeniedPrincipals...) }),
		"empty for nil": mod(func(r *deny.Rule) { r.ExceptionPrincipals, r.ExceptionPermissions = []string{}, nil }),
		"condition copy": mod(func(r *deny.Rule) {
			r.Condition = &expr.Expr{Expression: base.Condition.Expression}
		}),
	}
	for name, r := range equal {
		if !base.Equal(r) || !r.Equal(base) {
			t.Errorf("%s: not equal, want equal", name)
		}
	}
	differ := map[string]deny.Rule{
		"a principal fewer":   mod(func(r *deny.Rule) { r.DeniedPrincipals = base.DeniedPrincipals[:1] }),
		"description":         mod(func(r *deny.Rule) { r.Description = "d " }),
		"no condition":        mod(func(r *deny.Rule) { r.Condition = nil }),
		"condition title":     mod(func(r *deny.Rule) { r.Condition = &expr.Expr{Expression: base.Condition.Expression, Title: "t"} }),
		"exception principal": mod(func(r *deny.Rule) { r.ExceptionPrincipals = []string{"principal://goog/subject/c@example.com"} }),
		"list swapped":        mod(func(r *deny.Rule) { r.ExceptionPermissions = r.DeniedPermissions }),
	}
	for name, r := range differ {
		if base.Equal(r) || r.Equal(base) {
			t.Errorf("%s: equal, want different", name)
		}
	}
}

// TestNetNoChangeWritesNothing: the changes are judged by what they leave,
// as Update promises ("the policy read when nothing changed (then nothing
// is written)"): a rule added and removed again in one Update leaves the
// policy as it was read, and nothing is written; with CreateIfAbsent an
// absent policy whose changes add no rule in the end is not created.
func TestNetNoChangeWritesNothing(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			e := newEnv(t, tr, nil, deny.CreateIfAbsent())
			ctx := context.Background()
			p, err := e.u.Update(ctx, policyName, deny.AddRule(rule(1)), deny.RemoveRule(rule(1)))
			if err != nil || p != nil {
				t.Fatalf("absent policy, a rule added and removed: %v, %v; want nil, nil", p, err)
			}
			if n := e.srv.CountCalls(iamtest.MethodCreatePolicy); n != 0 {
				t.Fatalf("%d CreatePolicy calls for changes that add no rule in the end; want none", n)
			}

			seeded := e.seed(rule(0))
			e.srv.ResetCalls()
			p, err = e.u.Update(ctx, policyName, deny.AddRule(rule(1)), deny.RemoveRule(rule(1)))
			if err != nil {
				t.Fatal(err)
			}
			if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); n != 0 {
				t.Fatalf("%d UpdatePolicy calls for changes that leave the policy as read; want none", n)
			}
			if p.GetEtag() != seeded.GetEtag() {
				t.Fatalf("returned etag %q, want the read's %q", p.GetEtag(), seeded.GetEtag())
			}
		})
	}
}

// TestRemoveRuleMatchesAsSet: RemoveRule given the rule's lists in another
// order, with repeats, removes every stored rule equal to it (duplicates
// in the store included) and leaves the others.
func TestRemoveRuleMatchesAsSet(t *testing.T) {
	e := newEnv(t, "grpc", nil)
	r := deny.Rule{
		DeniedPrincipals:  []string{"principal://goog/subject/a@example.com", "principal://goog/subject/b@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete", "iam.googleapis.com/roles.update"},
	}
	e.seed(r, rule(0), r)
	shuffled := r
	shuffled.DeniedPrincipals = []string{r.DeniedPrincipals[1], r.DeniedPrincipals[0], r.DeniedPrincipals[1]}
	shuffled.DeniedPermissions = []string{r.DeniedPermissions[1], r.DeniedPermissions[0]}
	p, err := e.u.Update(context.Background(), policyName, deny.RemoveRule(shuffled))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.GetRules()) != 1 || e.count(rule(0)) != 1 || e.count(r) != 0 {
		t.Fatalf("rules %v", p.GetRules())
	}
}

// TestChangeKeepsItsOwnCopy: a Change made by AddRule or RemoveRule holds
// its own copy of the rule: the caller reusing the slices and the
// condition afterwards changes neither what is checked nor what is
// written.
func TestChangeKeepsItsOwnCopy(t *testing.T) {
	e := newEnv(t, "grpc", nil)
	e.seed(rule(0))
	r := deny.Rule{
		DeniedPrincipals:  []string{"principal://goog/subject/a@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
		Condition:         &expr.Expr{Expression: `resource.matchTag("1/env", "prod")`},
	}
	want := deny.Rule{
		DeniedPrincipals:  []string{"principal://goog/subject/a@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
		Condition:         &expr.Expr{Expression: `resource.matchTag("1/env", "prod")`},
	}
	add := deny.AddRule(r)
	r.DeniedPrincipals[0] = "user:a@example.com" // malformed, had it been checked now
	r.DeniedPermissions[0] = "iam.googleapis.com/roles.update"
	r.Condition.Expression = ""
	if _, err := e.u.Update(context.Background(), policyName, add); err != nil {
		t.Fatal(err)
	}
	if e.count(want) != 1 {
		t.Fatalf("stored %v, want the rule as it was given", e.srv.DenyPolicy(policyName).GetRules())
	}
}

// TestRemoveAndAddBackWritesNothing: an Update that removes a rule and adds
// it back with its lists in another order (and so at the end of the rules)
// leaves the same rule set: nothing is written.
func TestRemoveAndAddBackWritesNothing(t *testing.T) {
	e := newEnv(t, "grpc", nil)
	r := deny.Rule{
		DeniedPrincipals:  []string{"principal://goog/subject/a@example.com", "principal://goog/subject/b@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete", "iam.googleapis.com/roles.update"},
	}
	e.seed(r, rule(0))
	e.srv.ResetCalls()
	back := r
	back.DeniedPrincipals = []string{r.DeniedPrincipals[1], r.DeniedPrincipals[0]}
	back.DeniedPermissions = []string{r.DeniedPermissions[1], r.DeniedPermissions[0]}
	if _, err := e.u.Update(context.Background(), policyName, deny.RemoveRule(r), deny.AddRule(back)); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.CountCalls(iamtest.MethodUpdatePolicy); n != 0 {
		t.Fatalf("%d writes, want none: the rule set is the one read", n)
	}
	if e.count(r) != 1 || e.count(rule(0)) != 1 {
		t.Fatalf("rules %v", e.srv.DenyPolicy(policyName).GetRules())
	}
}
