package policy

import (
	"slices"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/protobuf/proto"
)

// Mutation changes a policy in place and reports whether it changed it. The
// Updater hands it a private copy of the policy just read; it must not keep
// the policy or touch it after returning.
//
// A Mutation must be idempotent: run on a policy that already holds its
// change, it must change nothing and report false. The Updater reruns
// mutations on every fresh read (after a conflict, a transient failure or a
// write whose answer was lost), and relies on that to apply each change
// exactly once. Every Mutation of this package is idempotent.
//
// A Mutation that returns an error fails its caller's Update: nothing of the
// caller's mutations is written, the error is returned wrapped (errors.Is
// and errors.As see it), and callers coalesced with it are not affected.
type Mutation func(p *iampb.Policy) (changed bool, err error)

// AddBinding grants role to member unconditionally: it adds member to the
// policy's binding of role without a condition, creating the binding if
// there is none. It changes nothing when member (compared as IAM compares
// members, see CanonicalMember) already holds role unconditionally; a
// conditional grant of the same role does not count. The member is written
// in its canonical form. An empty or malformed role, or a member that is of
// none of the forms IAM documents (see CanonicalMember) or malformed in its
// form, is an error (INVALID_ARGUMENT).
func AddBinding(role, member string) Mutation {
	return AddConditionalBinding(role, member, nil)
}

// AddConditionalBinding grants role to member under cond: it adds member to
// the binding keyed by (role, cond), creating it if there is none. Bindings
// with the same role and different conditions, or none, are distinct;
// conditions are the same when their expression, title and description are
// equal. A nil cond is AddBinding. cond is copied when the Mutation is made.
// The Updater writes version 3 whenever a binding has a condition. A
// condition without an expression or a title is an error (INVALID_ARGUMENT),
// as it is for IAM.
func AddConditionalBinding(role, member string, cond *expr.Expr) Mutation {
	cond = cloneExpr(cond)
	canon := CanonicalMember(member)
	return func(p *iampb.Policy) (bool, error) {
		if err := checkGrant(role, member, cond); err != nil {
			return false, err
		}
		var first *iampb.Binding
		for _, b := range p.GetBindings() {
			if !sameKey(b, role, cond) {
				continue
			}
			if slices.ContainsFunc(b.Members, func(m string) bool { return sameMember(m, canon) }) {
				return false, nil
			}
			if first == nil {
				first = b
			}
		}
		if first == nil {
			p.Bindings = append(p.Bindings, &iampb.Binding{Role: role, Members: []string{canon}, Condition: cloneExpr(cond)})
		} else {
			first.Members = append(first.Members, canon)
		}
		return true, nil
	}
}

// RemoveBinding revokes role from member's unconditional grant: it removes
// member (compared as IAM compares members) from the binding of role without
// a condition, and drops the binding if that leaves it empty. Conditional
// grants of the role are kept (see RemoveConditionalBinding). It changes
// nothing when member does not hold role unconditionally. It refuses
// (INVALID_ARGUMENT) exactly the roles and members AddBinding refuses.
func RemoveBinding(role, member string) Mutation {
	return RemoveConditionalBinding(role, member, nil)
}

// RemoveConditionalBinding revokes member's grant of role under cond: it
// removes member from the binding keyed by (role, cond) and drops the
// binding if that leaves it empty. A nil cond is RemoveBinding. It changes
// nothing when there is no such grant. It refuses (INVALID_ARGUMENT) exactly
// the roles, members and conditions AddConditionalBinding refuses.
func RemoveConditionalBinding(role, member string, cond *expr.Expr) Mutation {
	cond = cloneExpr(cond)
	return func(p *iampb.Policy) (bool, error) {
		if err := checkGrant(role, member, cond); err != nil {
			return false, err
		}
		return removeWhere(p, member, func(b *iampb.Binding) bool { return sameKey(b, role, cond) }), nil
	}
}

// RemoveMember revokes every grant of member: it removes member from every
// binding, whatever its role or condition, and drops the bindings that this
// leaves empty. Audit configs' exempted members are left as they are. It
// changes nothing when member holds no role. It refuses (INVALID_ARGUMENT)
// exactly the members AddBinding refuses.
func RemoveMember(member string) Mutation {
	return func(p *iampb.Policy) (bool, error) {
		if err := checkMember(member); err != nil {
			return false, err
		}
		return removeWhere(p, member, func(*iampb.Binding) bool { return true }), nil
	}
}

// removeWhere removes member from the bindings that match and drops those
// left empty; it reports whether it removed anything.
func removeWhere(p *iampb.Policy, member string, match func(*iampb.Binding) bool) bool {
	canon := CanonicalMember(member)
	changed := false
	for _, b := range p.GetBindings() {
		if !match(b) {
			continue
		}
		n := len(b.Members)
		b.Members = slices.DeleteFunc(b.Members, func(m string) bool { return sameMember(m, canon) })
		changed = changed || len(b.Members) != n
	}
	if changed {
		p.Bindings = slices.DeleteFunc(p.Bindings, func(b *iampb.Binding) bool { return len(b.GetMembers()) == 0 })
	}
	return changed
}

// checkGrant refuses what IAM would refuse in a grant of role to member
// under cond. Adding and removing a grant check the same, so that a removal
// never succeeds by matching nothing where the grant would be refused.
func checkGrant(role, member string, cond *expr.Expr) error {
	if err := checkRole(role); err != nil {
		return err
	}
	if err := checkMember(member); err != nil {
		return err
	}
	return checkCondition(role, cond)
}

// sameKey reports whether b is the binding of role under cond.
func sameKey(b *iampb.Binding, role string, cond *expr.Expr) bool {
	return b.GetRole() == role && sameCondition(b.GetCondition(), cond)
}

// sameCondition compares conditions as bindings are keyed: by expression,
// title and description. nil is no condition, distinct from every one.
func sameCondition(a, b *expr.Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.GetExpression() == b.GetExpression() &&
		a.GetTitle() == b.GetTitle() &&
		a.GetDescription() == b.GetDescription()
}

func checkCondition(role string, c *expr.Expr) error {
	if c == nil {
		return nil
	}
	if c.GetExpression() == "" {
		return invalid("invalid condition for role %q: the expression must not be empty", role)
	}
	if c.GetTitle() == "" {
		return invalid("invalid condition for role %q: the title must not be empty", role)
	}
	return nil
}

func cloneExpr(e *expr.Expr) *expr.Expr {
	if e == nil {
		return nil
	}
	return proto.Clone(e).(*expr.Expr)
}
