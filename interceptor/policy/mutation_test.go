package policy_test

import (
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/interceptor/policy"
)

func mustApply(t *testing.T, p *iampb.Policy, m policy.Mutation, wantChanged bool) {
	t.Helper()
	changed, err := m(p)
	if err != nil {
		t.Fatalf("mutation failed: %v", err)
	}
	if changed != wantChanged {
		t.Fatalf("changed = %v, want %v; policy now %v", changed, wantChanged, p)
	}
}

var weekdays = &expr.Expr{Title: "weekdays", Expression: "request.time.getDayOfWeek() < 5"}

// TestMutationsIdempotent: every mutation, run again on the policy it made,
// finds its work done.
func TestMutationsIdempotent(t *testing.T) {
	t.Parallel()
	seed := func() *iampb.Policy {
		return &iampb.Policy{Bindings: []*iampb.Binding{
			{Role: "roles/viewer", Members: []string{"user:a@example.com", "user:b@example.com"}},
			{Role: "roles/viewer", Members: []string{"user:a@example.com"}, Condition: proto.Clone(weekdays).(*expr.Expr)},
			{Role: "roles/editor", Members: []string{"user:a@example.com"}},
		}}
	}
	for name, m := range map[string]policy.Mutation{
		"AddBinding":               policy.AddBinding("roles/owner", "user:c@example.com"),
		"AddConditionalBinding":    policy.AddConditionalBinding("roles/editor", "user:a@example.com", weekdays),
		"RemoveBinding":            policy.RemoveBinding("roles/viewer", "user:a@example.com"),
		"RemoveConditionalBinding": policy.RemoveConditionalBinding("roles/viewer", "user:a@example.com", weekdays),
		"RemoveMember":             policy.RemoveMember("user:a@example.com"),
	} {
		t.Run(name, func(t *testing.T) {
			p := seed()
			mustApply(t, p, m, true)
			after := proto.Clone(p)
			mustApply(t, p, m, false)
			if !proto.Equal(p, after) {
				t.Fatalf("the rerun changed the policy:\n%v\nto\n%v", after, p)
			}
			for _, b := range p.GetBindings() {
				if len(b.GetMembers()) == 0 {
					t.Fatalf("an empty binding was left behind: %v", p)
				}
			}
		})
	}
}

// TestBindingsKeyedByRoleAndCondition: the conditional and the
// unconditional bindings of one role are distinct; conditions compare by
// expression, title and description.
func TestBindingsKeyedByRoleAndCondition(t *testing.T) {
	t.Parallel()
	p := &iampb.Policy{}
	mustApply(t, p, policy.AddBinding("roles/viewer", "user:a@example.com"), true)
	mustApply(t, p, policy.AddConditionalBinding("roles/viewer", "user:a@example.com", weekdays), true)
	if len(p.Bindings) != 2 {
		t.Fatalf("want two bindings, got %v", p)
	}
	same := &expr.Expr{Title: weekdays.Title, Expression: weekdays.Expression, Location: "elsewhere"}
	mustApply(t, p, policy.AddConditionalBinding("roles/viewer", "user:a@example.com", same), false)
	described := &expr.Expr{Title: weekdays.Title, Expression: weekdays.Expression, Description: "other"}
	mustApply(t, p, policy.AddConditionalBinding("roles/viewer", "user:a@example.com", described), true)
	if len(p.Bindings) != 3 {
		t.Fatalf("want three bindings, got %v", p)
	}
	// RemoveBinding touches only the unconditional grant.
	mustApply(t, p, policy.RemoveBinding("roles/viewer", "user:a@example.com"), true)
	for _, b := range p.Bindings {
		if b.Condition == nil {
			t.Fatalf("the unconditional binding should be gone: %v", p)
		}
	}
	mustApply(t, p, policy.RemoveConditionalBinding("roles/viewer", "user:a@example.com", weekdays), true)
	mustApply(t, p, policy.RemoveMember("user:a@example.com"), true)
	if len(p.Bindings) != 0 {
		t.Fatalf("want no bindings, got %v", p)
	}
	// The condition is copied when the mutation is made.
	cond := proto.Clone(weekdays).(*expr.Expr)
	m := policy.AddConditionalBinding("roles/viewer", "user:a@example.com", cond)
	cond.Title = "changed"
	mustApply(t, p, m, true)
	if p.Bindings[0].Condition.Title != "weekdays" || p.Bindings[0].Condition == cond {
		t.Fatalf("condition not copied: %v", p.Bindings[0].Condition)
	}
}

// TestMutationsRefuseBadInput: malformed roles, members and conditions fail
// with INVALID_ARGUMENT before anything changes.
func TestMutationsRefuseBadInput(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]policy.Mutation{
		"empty role":       policy.AddBinding("", "user:a@example.com"),
		"empty member":     policy.AddBinding("roles/viewer", ""),
		"no kind":          policy.AddBinding("roles/viewer", "alice@example.com"),
		"no email":         policy.AddBinding("roles/viewer", "user:alice"),
		"space":            policy.AddBinding("roles/viewer", "user:a @example.com"),
		"deleted, no uid":  policy.AddBinding("roles/viewer", "deleted:user:a@example.com"),
		"condition, title": policy.AddConditionalBinding("roles/viewer", "user:a@example.com", &expr.Expr{Expression: "true"}),
		"condition, expr":  policy.AddConditionalBinding("roles/viewer", "user:a@example.com", &expr.Expr{Title: "t"}),
	} {
		p := &iampb.Policy{}
		changed, err := m(p)
		if status.Code(err) != codes.InvalidArgument || changed || len(p.Bindings) != 0 {
			t.Errorf("%s: changed %v, err %v, policy %v", name, changed, err, p)
		}
	}
	for _, ok := range []string{"allUsers", "allAuthenticatedUsers", "domain:example.com",
		"principal://iam.googleapis.com/x", "principalSet://goog/y", "projectViewer:p1",
		"deleted:group:g@example.com?uid=7"} {
		if _, err := policy.AddBinding("roles/viewer", ok)(&iampb.Policy{}); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
