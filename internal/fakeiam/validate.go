package fakeiam

import (
	"fmt"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// MaxPrincipals is the most member entries a policy may hold, counted across
// bindings: a principal granted two roles counts twice, as IAM counts.
const MaxPrincipals = 1500

// emailPrefixes are the member kinds whose value is an email address.
var emailPrefixes = []string{"user:", "serviceAccount:", "group:"}

// validateMember checks one binding member against IAM's principal syntax.
func validateMember(m string) error {
	bad := func(why string) error {
		return status.Errorf(codes.InvalidArgument, "invalid member %q: %s", m, why)
	}
	if m == "allUsers" || m == "allAuthenticatedUsers" {
		return nil
	}
	if m == "" {
		return bad("a member must not be empty")
	}
	if strings.ContainsAny(m, " \t\r\n") {
		return bad("a member must not contain white space")
	}
	if rest, ok := strings.CutPrefix(m, "deleted:"); ok {
		for _, p := range emailPrefixes {
			if v, ok := strings.CutPrefix(rest, p); ok {
				email, uid, found := strings.Cut(v, "?uid=")
				if !found || uid == "" || !strings.Contains(email, "@") {
					return bad("a deleted principal must be deleted:" + p + "EMAIL?uid=UNIQUE_ID")
				}
				return nil
			}
		}
		return bad("a deleted principal must start with deleted:user:, deleted:serviceAccount: or deleted:group:")
	}
	for _, p := range emailPrefixes {
		if v, ok := strings.CutPrefix(m, p); ok {
			if i := strings.IndexByte(v, '@'); i <= 0 || i == len(v)-1 {
				return bad("the value after " + p + " must be an email address")
			}
			return nil
		}
	}
	if v, ok := strings.CutPrefix(m, "domain:"); ok {
		if v == "" || strings.Contains(v, "@") {
			return bad("the value after domain: must be a domain name")
		}
		return nil
	}
	for _, p := range []string{"principal:", "principalSet:"} {
		if v, ok := strings.CutPrefix(m, p); ok {
			if !strings.HasPrefix(v, "//") || len(v) == 2 {
				return bad("the value after " + p + " must be an identifier starting with //")
			}
			return nil
		}
	}
	return bad("a member must be allUsers, allAuthenticatedUsers, or start with " +
		"user:, serviceAccount:, group:, domain:, principal:, principalSet: or deleted:")
}

// validateRole checks a binding's role name.
func validateRole(r string) error {
	bad := status.Errorf(codes.InvalidArgument,
		"invalid role %q: a role must be roles/NAME, projects/PROJECT_ID/roles/NAME or organizations/ORG_ID/roles/NAME", r)
	parts := strings.Split(r, "/")
	for _, p := range parts {
		if p == "" {
			return bad
		}
	}
	switch {
	case len(parts) == 2 && parts[0] == "roles":
		return nil
	case len(parts) == 4 && (parts[0] == "projects" || parts[0] == "organizations") && parts[2] == "roles":
		return nil
	}
	return bad
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
// the policy holds no more than MaxPrincipals member entries.
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
			if !seen[dst][m] {
				seen[dst][m] = true
				dst.Members = append(dst.Members, m)
			}
		}
	}
	out = dropEmptyBindings(out)
	n := 0
	for _, b := range out {
		n += len(b.Members)
	}
	if n > MaxPrincipals {
		return nil, status.Errorf(codes.InvalidArgument,
			"the number of members in the policy (%d) is larger than the maximum allowed size %d", n, MaxPrincipals)
	}
	return out, nil
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

// checkRequestedVersion applies IAM's read rule: a policy with conditional
// bindings cannot be read with a requested version below 3.
func checkRequestedVersion(requested int32, stored *iampb.Policy) error {
	if !validVersion(requested) {
		return status.Errorf(codes.InvalidArgument,
			"invalid requested policy version %d: the version must be 1 or 3 (0 counts as 1)", requested)
	}
	requested = max(requested, 1)
	if v := stored.GetVersion(); requested < v {
		return status.Error(codes.InvalidArgument, fmt.Sprintf(
			"Requested policy version (%d) cannot be less than the existing policy version (%d).", requested, v))
	}
	return nil
}
