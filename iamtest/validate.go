package iamtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxPrincipals is the most member entries a policy may hold, counted across
// bindings: a principal granted two roles counts twice, as IAM counts.
const maxPrincipals = 1500

// validateRole checks a binding's role name. Predefined roles are
// roles/SERVICE.roleName: dot-separated words of letters and digits, the
// first starting with a lower-case letter, so roles/Viewer is refused as IAM
// refuses it (https://cloud.google.com/iam/docs/roles-overview#role-types).
// Custom roles are projects/PROJECT_ID/roles/ID or
// organizations/ORG_ID/roles/ID, ID being 1 to 64 letters, digits, periods
// and underscores (https://cloud.google.com/iam/docs/creating-custom-roles#naming_the_role).
func validateRole(r string) error {
	bad := status.Errorf(codes.InvalidArgument,
		"invalid role %q: a role must be roles/NAME (lowerCamelCase words joined by dots), "+
			"projects/PROJECT_ID/roles/ID or organizations/ORG_ID/roles/ID", r)
	parts := strings.Split(r, "/")
	for _, p := range parts {
		if p == "" {
			return bad
		}
	}
	switch {
	case len(parts) == 2 && parts[0] == "roles" && predefinedRoleID(parts[1]):
		return nil
	case len(parts) == 4 && (parts[0] == "projects" || parts[0] == "organizations") && parts[2] == "roles" && customRoleID(parts[3]):
		return nil
	}
	return bad
}

// predefinedRoleID reports whether id is a well-formed predefined role ID.
func predefinedRoleID(id string) bool {
	if id[0] < 'a' || id[0] > 'z' {
		return false
	}
	for w := range strings.SplitSeq(id, ".") {
		if w == "" {
			return false
		}
		for _, c := range w {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return false
			}
		}
	}
	return true
}

// customRoleID reports whether id is a well-formed custom role ID.
func customRoleID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// validateBinding checks a binding's role, members and condition.
func validateBinding(b *iampb.Binding) error {
	if err := validateRole(b.GetRole()); err != nil {
		return err
	}
	for _, m := range b.GetMembers() {
		if err := validateMember(m); err != nil {
			return err
		}
	}
	if c := b.GetCondition(); c != nil {
		if strings.TrimSpace(c.GetExpression()) == "" {
			return status.Errorf(codes.InvalidArgument,
				"invalid condition in binding for role %q: the condition expression must not be empty", b.GetRole())
		}
		if strings.TrimSpace(c.GetTitle()) == "" {
			return status.Errorf(codes.InvalidArgument,
				"invalid condition in binding for role %q: the condition title must not be empty", b.GetRole())
		}
		if err := checkCondition(b.GetRole(), c.GetExpression()); err != nil {
			return err
		}
		if err := checkConditionalGrant(b); err != nil {
			return err
		}
	}
	return nil
}

// checkConditionalGrant applies the limits of a conditional binding
// (https://cloud.google.com/iam/docs/conditions-overview): no condition on
// the basic roles roles/owner, roles/editor and roles/viewer, nor for allUsers
// or allAuthenticatedUsers, and at most maxLogicalOperators logical operators
// in the expression. IAM's words for these are undocumented: the messages
// name the rule and the offending value.
func checkConditionalGrant(b *iampb.Binding) error {
	switch b.GetRole() {
	case "roles/owner", "roles/editor", "roles/viewer":
		return status.Errorf(codes.InvalidArgument,
			"invalid condition in binding for role %q: conditions cannot be used with basic roles (roles/owner, roles/editor, roles/viewer)", b.GetRole())
	}
	for _, m := range b.GetMembers() {
		if m == "allUsers" || m == "allAuthenticatedUsers" {
			return status.Errorf(codes.InvalidArgument,
				"invalid condition in binding for role %q: conditions cannot be used when granting a role to %s", b.GetRole(), m)
		}
	}
	if n := logicalOperators(b.GetCondition().GetExpression()); n > maxLogicalOperators {
		return status.Errorf(codes.InvalidArgument,
			"invalid condition in binding for role %q: the expression has %d logical operators, more than the maximum of %d",
			b.GetRole(), n, maxLogicalOperators)
	}
	return nil
}

// checkPolicyPrincipals applies the 1,500-principal limit to a whole policy:
// role bindings' members and audit-log exemptions together
// (https://cloud.google.com/iam/docs/policies#principals-per-policy-limit:
// "you can have up to a total of 1,500 principals in role bindings and audit
// logging exemptions").
func checkPolicyPrincipals(p *iampb.Policy) error {
	n := 0
	for _, b := range p.GetBindings() {
		n += len(b.GetMembers())
	}
	for _, ac := range p.GetAuditConfigs() {
		for _, lc := range ac.GetAuditLogConfigs() {
			n += len(lc.GetExemptedMembers())
		}
	}
	if n > maxPrincipals {
		return status.Errorf(codes.InvalidArgument,
			"The number of members in the policy (%s) is larger than the maximum allowed size %s.", thousands(n), thousands(maxPrincipals))
	}
	return nil
}

// validateAuditConfigs checks audit configs: a service and valid exemptions.
func validateAuditConfigs(acs []*iampb.AuditConfig) error {
	for _, ac := range acs {
		if ac.GetService() == "" {
			return status.Error(codes.InvalidArgument, "invalid audit config: the service must not be empty (use allServices for every service)")
		}
		for _, lc := range ac.GetAuditLogConfigs() {
			if lc.GetLogType() == iampb.AuditLogConfig_LOG_TYPE_UNSPECIFIED {
				return status.Errorf(codes.InvalidArgument, "invalid audit config for service %q: the log type must be set", ac.GetService())
			}
			for _, m := range lc.GetExemptedMembers() {
				if err := validateMember(m); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// validVersion reports whether v is a policy version IAM knows (0 means 1).
func validVersion(v int32) bool { return v == 0 || v == 1 || v == 3 }

// normalizeBindings validates bindings and returns IAM's stored form of them:
// members deduplicated within a binding, bindings with the same role and
// condition merged, bindings left without members dropped. It also checks
// that a conditional binding is only written with policy version 3 and that
// the policy holds no more than maxPrincipals member entries.
func normalizeBindings(in []*iampb.Binding, version int32) ([]*iampb.Binding, error) {
	if !validVersion(version) {
		return nil, status.Errorf(codes.InvalidArgument,
			"invalid policy version %d: the version must be 1 or 3 (0 counts as 1)", version)
	}
	var out []*iampb.Binding
	seen := map[*iampb.Binding]map[string]bool{}
	for _, b := range in {
		if err := validateBinding(b); err != nil {
			return nil, err
		}
		if b.GetCondition() != nil && version < 3 {
			return nil, status.Errorf(codes.InvalidArgument,
				"the binding for role %q has a condition, but the policy version is %d: "+
					"conditional role bindings need policy version 3", b.GetRole(), max(version, 1))
		}
		var dst *iampb.Binding
		for _, o := range out {
			if o.Role == b.GetRole() && proto.Equal(o.Condition, b.GetCondition()) {
				dst = o
				break
			}
		}
		if dst == nil {
			dst = &iampb.Binding{Role: b.GetRole()}
			if b.GetCondition() != nil {
				dst.Condition = proto.Clone(b.GetCondition()).(*expr.Expr)
			}
			out = append(out, dst)
			seen[dst] = map[string]bool{}
		}
		for _, m := range b.GetMembers() {
			m = canonicalMember(m)
			if !seen[dst][m] {
				seen[dst][m] = true
				dst.Members = append(dst.Members, m)
			}
		}
	}
	out = dropEmptyBindings(out)
	if err := checkLimits(out); err != nil {
		return nil, err
	}
	return out, nil
}

// maxGroups is the most group: entries a policy may hold, counted like
// maxPrincipals: https://cloud.google.com/iam/docs/policies#principals-per-policy-limit.
const maxGroups = 250

// maxConditionalBindingsPerRoleAndPrincipal is the most conditional bindings
// of one role that may name one principal:
// https://cloud.google.com/iam/docs/policies#limits.
const maxConditionalBindingsPerRoleAndPrincipal = 20

// checkLimits applies IAM's size limits to stored bindings. The message of the
// principal limit is IAM's own ("The number of members in the policy (1,503)
// is larger than the maximum allowed size 1,500."); the messages of the other
// two are undocumented and name the limit and the offending value.
func checkLimits(bs []*iampb.Binding) error {
	n, groups := 0, 0
	conds := map[[2]string]int{}
	for _, b := range bs {
		n += len(b.Members)
		for _, m := range b.Members {
			if strings.HasPrefix(m, "group:") {
				groups++
			}
			if b.Condition != nil {
				conds[[2]string{b.Role, m}]++
			}
		}
	}
	if n > maxPrincipals {
		return status.Errorf(codes.InvalidArgument,
			"The number of members in the policy (%s) is larger than the maximum allowed size %s.", thousands(n), thousands(maxPrincipals))
	}
	if groups > maxGroups {
		return status.Errorf(codes.InvalidArgument,
			"The number of groups in the policy (%s) is larger than the maximum allowed size %d.", thousands(groups), maxGroups)
	}
	for k, c := range conds {
		if c > maxConditionalBindingsPerRoleAndPrincipal {
			return status.Errorf(codes.InvalidArgument,
				"The principal %s is in %d conditional bindings of role %s, more than the maximum of %d.",
				k[1], c, k[0], maxConditionalBindingsPerRoleAndPrincipal)
		}
	}
	return nil
}

// thousands writes n with a comma between groups of three digits, as IAM's
// messages do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// dropEmptyBindings removes bindings without members, as IAM does on write.
func dropEmptyBindings(in []*iampb.Binding) []*iampb.Binding {
	out := in[:0:0]
	for _, b := range in {
		if len(b.GetMembers()) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// lowestVersion is the lowest policy version that represents p: 3 when any
// binding has a condition, else 1.
func lowestVersion(p *iampb.Policy) int32 {
	for _, b := range p.GetBindings() {
		if b.GetCondition() != nil {
			return 3
		}
	}
	return 1
}

// versionsHelp ends IAM's messages about policy versions.
const versionsHelp = " For more information, please refer to https://cloud.google.com/iam/docs/policies#versions"

// readVersion answers stored for a read asking for version requested. A
// policy with conditional bindings read below version 3 is refused with
// IAM's message, or, in SuffixConditionalRoles mode, answered as version 1
// with each conditional binding's role suffixed "_withcond_" and a hash of
// its condition and the condition dropped. The version rule is
// https://cloud.google.com/iam/docs/policies#versions; which of the two
// answers IAM gives is undocumented (both have been seen), hence the
// control, whose default is the refusal.
func readVersion(requested int32, stored *iampb.Policy, mode ConditionalRead) (*iampb.Policy, error) {
	if !validVersion(requested) {
		return nil, status.Errorf(codes.InvalidArgument,
			"invalid requested policy version %d: the version must be 1 or 3 (0 counts as 1)", requested)
	}
	requested = max(requested, 1)
	out := proto.Clone(stored).(*iampb.Policy)
	if v := stored.GetVersion(); requested < v {
		if mode != SuffixConditionalRoles {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf(
				"Requested policy version (%d) cannot be less than the existing policy version (%d).", requested, v)+versionsHelp)
		}
		for _, b := range out.Bindings {
			if c := b.Condition; c != nil {
				sum := sha256.Sum256([]byte(c.GetTitle() + "\x00" + c.GetDescription() + "\x00" + c.GetExpression()))
				b.Role += "_withcond_" + hex.EncodeToString(sum[:10])
				b.Condition = nil
			}
		}
		out.Version = requested
	}
	return out, nil
}

// checkWriteVersion applies IAM's write rule, checked only when the write
// carries an etag (https://cloud.google.com/iam/docs/policies#versions): a
// policy cannot be written with a version below the stored one. The message
// is IAM's ("Specified policy version (1) cannot be less than the existing
// policy version (3). For more information, ...").
func checkWriteVersion(version int32, cur *iampb.Policy) error {
	if v := max(version, 1); v < cur.GetVersion() {
		return status.Error(codes.InvalidArgument, fmt.Sprintf(
			"Specified policy version (%d) cannot be less than the existing policy version (%d).", v, cur.GetVersion())+versionsHelp)
	}
	return nil
}
