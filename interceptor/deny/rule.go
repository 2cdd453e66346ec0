package deny

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	iampb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/genproto/googleapis/type/expr"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// Rule is one deny rule of a deny policy (google.iam.v2.PolicyRule with a
// DenyRule): its principals are denied its permissions, except its
// exception principals and exception permissions, where its condition
// holds.
//
// Two rules are equal when every field is equal, the four lists compared
// as sets (order and repeats do not matter) and the conditions as protos
// (nil equals only nil). Principals and permissions are compared as
// written.
type Rule struct {
	// Description is the rule's description (up to 256 characters); may
	// be "".
	Description string
	// DeniedPrincipals are the principals denied the permissions, in IAM
	// v2's identifier forms (principal://goog/subject/EMAIL,
	// principalSet://goog/group/GROUP_EMAIL, PublicAll, ...). Required.
	DeniedPrincipals []string
	// ExceptionPrincipals are exempt from the rule; any form but PublicAll.
	ExceptionPrincipals []string
	// DeniedPermissions are the permissions denied, each
	// SERVICE_FQDN/RESOURCE.ACTION (iam.googleapis.com/roles.delete) or a
	// permission group (iam.googleapis.com/roles.*, iam.googleapis.com/*.*).
	// Required.
	DeniedPermissions []string
	// ExceptionPermissions are left out of DeniedPermissions, in the same
	// form.
	ExceptionPermissions []string
	// Condition, when set, is the denial condition: the rule applies only
	// where it holds. IAM accepts only expressions over resource tags;
	// it is IAM that judges the expression.
	Condition *expr.Expr
}

// proto returns r as the PolicyRule it is written as, its lists without
// repeats (first occurrence kept).
func (r Rule) proto() *iampb.PolicyRule {
	cond := cloneExpr(r.Condition)
	return &iampb.PolicyRule{
		Description: r.Description,
		Kind: &iampb.PolicyRule_DenyRule{DenyRule: &iampb.DenyRule{
			DeniedPrincipals:     dedup(r.DeniedPrincipals),
			ExceptionPrincipals:  dedup(r.ExceptionPrincipals),
			DeniedPermissions:    dedup(r.DeniedPermissions),
			ExceptionPermissions: dedup(r.ExceptionPermissions),
			DenialCondition:      cond,
		}},
	}
}

// RuleOf returns the Rule a PolicyRule read from IAM holds (a copy: p is
// not shared), and false when it holds no deny rule.
func RuleOf(p *iampb.PolicyRule) (Rule, bool) {
	d := p.GetDenyRule()
	if d == nil {
		return Rule{}, false
	}
	return Rule{
		Description:          p.GetDescription(),
		DeniedPrincipals:     slices.Clone(d.GetDeniedPrincipals()),
		ExceptionPrincipals:  slices.Clone(d.GetExceptionPrincipals()),
		DeniedPermissions:    slices.Clone(d.GetDeniedPermissions()),
		ExceptionPermissions: slices.Clone(d.GetExceptionPermissions()),
		Condition:            cloneExpr(d.GetDenialCondition()),
	}, true
}

// Equal reports whether r and o are the same rule (see Rule).
func (r Rule) Equal(o Rule) bool {
	return r.Description == o.Description &&
		sameSet(r.DeniedPrincipals, o.DeniedPrincipals) &&
		sameSet(r.ExceptionPrincipals, o.ExceptionPrincipals) &&
		sameSet(r.DeniedPermissions, o.DeniedPermissions) &&
		sameSet(r.ExceptionPermissions, o.ExceptionPermissions) &&
		sameCondition(r.Condition, o.Condition)
}

// matches reports whether the PolicyRule p holds the rule r.
func (r Rule) matches(p *iampb.PolicyRule) bool {
	o, ok := RuleOf(p)
	return ok && r.Equal(o)
}

func cloneExpr(e *expr.Expr) *expr.Expr {
	if e == nil {
		return nil
	}
	return proto.Clone(e).(*expr.Expr)
}

func sameCondition(a, b *expr.Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return proto.Equal(a, b)
}

// sameSet reports whether a and b hold the same strings, ignoring order and
// repeats.
func sameSet(a, b []string) bool {
	return slices.Equal(sortedSet(a), sortedSet(b))
}

func sortedSet(a []string) []string {
	s := slices.Clone(a)
	slices.Sort(s)
	return slices.Compact(s)
}

func dedup(a []string) []string {
	if len(a) == 0 {
		return nil
	}
	out := make([]string, 0, len(a))
	for _, s := range a {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// check returns why r cannot be a deny rule, naming each bad value, or nil.
// AddRule and RemoveRule refuse exactly the same rules.
func (r Rule) check() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if descriptionTooLong(r.Description) {
		bad("Description is %d characters: it can be up to %d", len([]rune(r.Description)), maxDescription)
	}
	if len(r.DeniedPrincipals) == 0 {
		bad("DeniedPrincipals is empty: a deny rule denies its permissions to at least one principal")
	}
	if len(r.DeniedPermissions) == 0 {
		bad("DeniedPermissions is empty: a deny rule denies at least one permission")
	}
	for _, p := range r.DeniedPrincipals {
		if why := checkPrincipal(p, false); why != "" {
			bad("DeniedPrincipals: invalid principal %q: %s", p, why)
		}
	}
	for _, p := range r.ExceptionPrincipals {
		if why := checkPrincipal(p, true); why != "" {
			bad("ExceptionPrincipals: invalid principal %q: %s", p, why)
		}
	}
	for _, p := range r.DeniedPermissions {
		if why := checkPermission(p); why != "" {
			bad("DeniedPermissions: invalid permission %q: %s", p, why)
		}
	}
	for _, p := range r.ExceptionPermissions {
		if why := checkPermission(p); why != "" {
			bad("ExceptionPermissions: invalid permission %q: %s", p, why)
		}
	}
	if r.Condition != nil && strings.TrimSpace(r.Condition.GetExpression()) == "" {
		bad("Condition has an empty expression: leave Condition nil for a rule without one")
	}
	return errors.Join(errs...)
}

// Change is one change of a deny policy's rules, made by AddRule or
// RemoveRule. It is idempotent: applied to a policy that holds it already,
// it changes nothing, so a write whose answer was lost is never applied
// twice. The zero Change is refused by Update.
type Change struct {
	add  bool
	rule Rule
	err  error
	set  bool
}

// AddRule adds r to the policy unless a rule equal to it (see Rule) is
// there already. Its lists are written without repeats. A malformed rule
// (an identifier or permission of no form IAM documents for deny policies,
// an empty DeniedPrincipals or DeniedPermissions, PublicAll as an
// exception, a description over 256 characters, an empty condition) is
// refused by Update, before any call, with an INVALID_ARGUMENT error naming
// each bad value.
func AddRule(r Rule) Change { return newChange(true, r) }

// RemoveRule removes every rule equal to r (see Rule) from the policy;
// when there is none it changes nothing. It refuses exactly the rules
// AddRule refuses (a malformed rule could never match, and removing it
// would silently do nothing).
func RemoveRule(r Rule) Change { return newChange(false, r) }

func newChange(add bool, r Rule) Change {
	verb := "RemoveRule"
	if add {
		verb = "AddRule"
	}
	c := Change{add: add, rule: r, set: true}
	if err := r.check(); err != nil {
		c.err = fmt.Errorf("%s: %w", verb, err)
	}
	c.rule.DeniedPrincipals = slices.Clone(r.DeniedPrincipals)
	c.rule.ExceptionPrincipals = slices.Clone(r.ExceptionPrincipals)
	c.rule.DeniedPermissions = slices.Clone(r.DeniedPermissions)
	c.rule.ExceptionPermissions = slices.Clone(r.ExceptionPermissions)
	c.rule.Condition = cloneExpr(r.Condition)
	return c
}

// apply makes the change on p's rules and reports whether it changed them.
func (c Change) apply(p *iampb.Policy) bool {
	if c.add {
		if slices.ContainsFunc(p.Rules, c.rule.matches) {
			return false
		}
		p.Rules = append(p.Rules, c.rule.proto())
		return true
	}
	n := len(p.Rules)
	p.Rules = slices.DeleteFunc(p.Rules, c.rule.matches)
	return len(p.Rules) != n
}

// checkChanges refuses, before any call, changes that are malformed.
func checkChanges(name string, changes []Change) error {
	var errs []error
	if len(changes) == 0 {
		errs = append(errs, errors.New("no change given: pass AddRule or RemoveRule changes"))
	}
	for i, c := range changes {
		switch {
		case !c.set:
			errs = append(errs, fmt.Errorf("change %d of %d is the zero Change: make changes with AddRule or RemoveRule", i+1, len(changes)))
		case c.err != nil:
			errs = append(errs, fmt.Errorf("change %d of %d: %w", i+1, len(changes), c.err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return invalid(name, errors.Join(errs...))
}

// invalid is an INVALID_ARGUMENT error of this package about the policy
// name, in the Updaters' one shape.
func invalid(name string, err error) error {
	return updaters.Wrap(nil, "iamretry/deny", name, &invalidError{err: err})
}

// invalidError is the caller's own mistake, found before any call: it
// reports INVALID_ARGUMENT (status.Code) and is never retried.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }

func (e *invalidError) Unwrap() error { return e.err }

func (e *invalidError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.Error())
}
