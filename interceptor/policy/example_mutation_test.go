package policy_test

import (
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/type/expr"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// bindings prints a policy's bindings on one line: role, members and the
// condition's title, if any.
func bindings(p *iampb.Policy) string {
	var out []string
	for _, b := range p.GetBindings() {
		s := b.GetRole() + " " + strings.Join(b.GetMembers(), ",")
		if t := b.GetCondition().GetTitle(); t != "" {
			s += " if " + strconv.Quote(t)
		}
		out = append(out, s)
	}
	return "[" + strings.Join(out, "; ") + "]"
}

// A Mutation changes a policy in place and says whether it changed it; the
// Updater writes only when one did. Mutations are idempotent: applied twice,
// the second changes nothing (which is how a lost write answer is applied
// exactly once).
func ExampleAddBinding() {
	p := &iampb.Policy{}
	for range 2 {
		changed, err := policy.AddBinding("roles/viewer", "user:Alice@Example.com")(p)
		fmt.Println(changed, err, bindings(p))
	}
	// Output:
	// true <nil> [roles/viewer user:alice@example.com]
	// false <nil> [roles/viewer user:alice@example.com]
}

// A conditional binding is a binding of its own, beside the unconditional
// one of the same role; the Updater writes a policy with one as version 3.
func ExampleAddConditionalBinding() {
	p := &iampb.Policy{}
	until2027 := &expr.Expr{Title: "until 2027", Expression: `request.time < timestamp("2027-01-01T00:00:00Z")`}
	_, _ = policy.AddBinding("roles/viewer", "user:alice@example.com")(p)
	changed, err := policy.AddConditionalBinding("roles/viewer", "user:bob@example.com", until2027)(p)
	fmt.Println(changed, err)
	fmt.Println(bindings(p))
	// Output:
	// true <nil>
	// [roles/viewer user:alice@example.com; roles/viewer user:bob@example.com if "until 2027"]
}

// RemoveBinding takes a member out of a role's unconditional binding, and the
// binding out of the policy once it is empty. Removing what is not there
// changes nothing.
func ExampleRemoveBinding() {
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com", "user:bob@example.com"}}}}
	for range 2 {
		changed, err := policy.RemoveBinding("roles/viewer", "user:bob@example.com")(p)
		fmt.Println(changed, err, bindings(p))
	}
	// Output:
	// true <nil> [roles/viewer user:alice@example.com]
	// false <nil> [roles/viewer user:alice@example.com]
}

// RemoveConditionalBinding removes a member from the binding of a role with
// exactly that condition; the unconditional binding stays.
func ExampleRemoveConditionalBinding() {
	cond := &expr.Expr{Title: "office hours", Expression: `request.time.getHours("Europe/Paris") < 18`}
	p := &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:alice@example.com"}},
		{Role: "roles/viewer", Members: []string{"user:alice@example.com"}, Condition: cond},
	}}
	changed, err := policy.RemoveConditionalBinding("roles/viewer", "user:alice@example.com", cond)(p)
	fmt.Println(changed, err)
	fmt.Println(bindings(p))
	// Output:
	// true <nil>
	// [roles/viewer user:alice@example.com]
}

// RemoveMember takes a principal out of every binding, conditional ones too:
// for someone who leaves.
func ExampleRemoveMember() {
	p := &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:alice@example.com", "user:bob@example.com"}},
		{Role: "roles/editor", Members: []string{"user:bob@example.com"}},
	}}
	changed, err := policy.RemoveMember("user:bob@example.com")(p)
	fmt.Println(changed, err, bindings(p))
	// Output:
	// true <nil> [roles/viewer user:alice@example.com]
}

// CanonicalMember spells a member the way IAM stores it, so that members
// compare as IAM compares them.
func ExampleCanonicalMember() {
	fmt.Println(policy.CanonicalMember("user:Alice@Example.COM"))
	fmt.Println(policy.CanonicalMember("serviceAccount:App@My-Project.iam.gserviceaccount.com"))
	// Output:
	// user:alice@example.com
	// serviceAccount:app@my-project.iam.gserviceaccount.com
}
