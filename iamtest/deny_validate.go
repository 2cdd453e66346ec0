package iamtest

import (
	"regexp"
	"strings"
	"unicode/utf8"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// publicAllPrincipal is the deny-policy identifier of "any principal that is
// on the internet" (google/iam/v2/deny.proto). A rule may deny it, never
// except it.
const publicAllPrincipal = "principalSet://goog/public:all"

// denyPrincipalForms are the identifiers a deny rule accepts, one regular
// expression each: those listed in the comment of DenyRule.denied_principals
// (google/iam/v2/deny.proto, and the fuller list of the iam/v2 discovery
// document). The fake's own table: it shares none with the library.
var denyPrincipalForms = []struct {
	form string
	re   *regexp.Regexp
}{
	{"principalSet://goog/public:all", regexp.MustCompile(`^principalSet://goog/public:all$`)},
	{"principal://goog/subject/EMAIL", regexp.MustCompile(`^principal://goog/subject/` + emailRE + `$`)},
	{"principalSet://goog/group/GROUP_EMAIL", regexp.MustCompile(`^principalSet://goog/group/` + emailRE + `$`)},
	{"principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL", regexp.MustCompile(`^principal://iam\.googleapis\.com/projects/-/serviceAccounts/` + emailRE + `$`)},
	{"principalSet://goog/cloudIdentityCustomerId/CUSTOMER_ID", regexp.MustCompile(`^principalSet://goog/cloudIdentityCustomerId/[A-Za-z0-9]+$`)},
	{"principal://iam.googleapis.com/locations/global/workforcePools/POOL/subject/VALUE", regexp.MustCompile(`^principal://iam\.googleapis\.com/locations/global/workforcePools/` + poolRE + `/subject/` + subjectRE + `$`)},
	{"principalSet://iam.googleapis.com/locations/global/workforcePools/POOL/group/GROUP", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/locations/global/workforcePools/` + poolRE + `/group/` + valueRE + `$`)},
	{"principalSet://iam.googleapis.com/locations/global/workforcePools/POOL/attribute.NAME/VALUE", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/locations/global/workforcePools/` + poolRE + `/attribute\.[A-Za-z0-9_]+/` + subjectRE + `$`)},
	{"principalSet://iam.googleapis.com/locations/global/workforcePools/POOL/*", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/locations/global/workforcePools/` + poolRE + `/\*$`)},
	{"principal://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/subject/VALUE", regexp.MustCompile(`^principal://iam\.googleapis\.com/projects/[1-9][0-9]*/locations/global/workloadIdentityPools/` + poolRE + `/subject/` + subjectRE + `$`)},
	{"principalSet://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/group/GROUP", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/projects/[1-9][0-9]*/locations/global/workloadIdentityPools/` + poolRE + `/group/` + valueRE + `$`)},
	{"principalSet://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/attribute.NAME/VALUE", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/projects/[1-9][0-9]*/locations/global/workloadIdentityPools/` + poolRE + `/attribute\.[A-Za-z0-9_]+/` + subjectRE + `$`)},
	{"principalSet://iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/*", regexp.MustCompile(`^principalSet://iam\.googleapis\.com/projects/[1-9][0-9]*/locations/global/workloadIdentityPools/` + poolRE + `/\*$`)},
	{"principalSet://cloudresourcemanager.googleapis.com/{projects|folders|organizations}/NUMBER/type/{ServiceAccount|ServiceAgent}", regexp.MustCompile(`^principalSet://cloudresourcemanager\.googleapis\.com/(projects|folders|organizations)/[1-9][0-9]*/type/(ServiceAccount|ServiceAgent)$`)},
	{"deleted:principal://goog/subject/EMAIL?uid=UID", regexp.MustCompile(`^deleted:principal://goog/subject/` + emailRE + `\?uid=[0-9]+$`)},
	{"deleted:principalSet://goog/group/GROUP_EMAIL?uid=UID", regexp.MustCompile(`^deleted:principalSet://goog/group/` + emailRE + `\?uid=[0-9]+$`)},
	{"deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL?uid=UID", regexp.MustCompile(`^deleted:principal://iam\.googleapis\.com/projects/-/serviceAccounts/` + emailRE + `\?uid=[0-9]+$`)},
	{"deleted:principal://iam.googleapis.com/locations/global/workforcePools/POOL/subject/VALUE", regexp.MustCompile(`^deleted:principal://iam\.googleapis\.com/locations/global/workforcePools/` + poolRE + `/subject/` + subjectRE + `$`)},
}

const (
	emailRE = `[^@/\s?]+@[^@/\s?]+\.[^@/\s?]+`
	poolRE  = `[a-z0-9][a-z0-9-]*`
	valueRE = `[^/\s]+`
	// subjectRE is a subject or attribute value, which may hold "/": the
	// values Workload Identity Federation maps from a token, such as GitHub's
	// repo:my-org/my-repo:ref:refs/heads/main subject and my-org/my-repo
	// repository (https://cloud.google.com/iam/docs/workload-identity-federation-with-deployment-pipelines,
	// https://cloud.google.com/iam/docs/principal-identifiers).
	subjectRE = `[^\s]+`
)

// denyPermissionRE is the v2 permission form SERVICE_FQDN/RESOURCE.ACTION
// ("Deny policies require the IAM v2 permission format",
// https://cloud.google.com/iam/docs/deny-permissions-support), such as
// iam.googleapis.com/roles.list. Any well-formed permission is accepted:
// the fake does not know which ones IAM supports in deny policies.
var denyPermissionRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+/[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+$`)

// denyPermissionGroupRE is a permission group: every permission of a
// service, SERVICE_FQDN/*.*, or of one resource type, SERVICE_FQDN/RESOURCE.*
// (such as iam.googleapis.com/roles.*), the two forms the "Permission
// groups" section of https://cloud.google.com/iam/docs/deny-overview#permission-groups
// lists. As for single permissions, the fake does not know which services
// IAM supports them for: it accepts them for any service, in denied and
// exception permissions alike. Any other wildcard (*.ACTION, roles.del*)
// is refused.
var denyPermissionGroupRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+/(\*\.\*|[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*\.\*)$`)

// validDenyPrincipal reports whether p is one of denyPrincipalForms.
func validDenyPrincipal(p string) bool {
	for _, f := range denyPrincipalForms {
		if f.re.MatchString(p) {
			return true
		}
	}
	return false
}

// principalHint names the forms of deny principals, for messages.
func principalHint(p string) string {
	switch {
	case strings.HasPrefix(p, "user:"), strings.HasPrefix(p, "group:"), strings.HasPrefix(p, "serviceAccount:"), strings.HasPrefix(p, "domain:"), p == "allUsers", p == "allAuthenticatedUsers":
		return " (an allow-policy member: deny policies use the v2 principal identifiers, such as principal://goog/subject/alice@example.com, principalSet://goog/group/admins@example.com, principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL, principalSet://goog/public:all)"
	}
	return " (expected a v2 principal identifier, such as principal://goog/subject/EMAIL, principalSet://goog/group/GROUP_EMAIL, principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL, principalSet://goog/public:all)"
}

// validateDenyPolicy checks what a caller writes into a deny policy, as
// google/iam/v2/policy.proto and deny.proto document it, and answers
// INVALID_ARGUMENT naming the first bad value. A rule must deny at least one
// permission to at least one principal (the fake's choice: IAM does not
// document an empty rule).
func validateDenyPolicy(p *iamv2pb.Policy) error {
	if n := utf8.RuneCountInString(p.GetDisplayName()); n > 63 {
		return status.Errorf(codes.InvalidArgument, "invalid display_name: %d characters, it can be up to 63", n)
	}
	for k, v := range p.GetAnnotations() {
		if n := utf8.RuneCountInString(k); n > 63 {
			return status.Errorf(codes.InvalidArgument, "invalid annotation key %q: %d characters, keys can be up to 63", k, n)
		}
		if n := utf8.RuneCountInString(v); n > 255 {
			return status.Errorf(codes.InvalidArgument, "invalid value of annotation %q: %d characters, values can be up to 255", k, n)
		}
	}
	for i, r := range p.GetRules() {
		if n := utf8.RuneCountInString(r.GetDescription()); n > 256 {
			return status.Errorf(codes.InvalidArgument, "invalid rules[%d].description: %d characters, it can be up to 256", i, n)
		}
		d := r.GetDenyRule()
		if d == nil {
			return status.Errorf(codes.InvalidArgument, "invalid rules[%d]: a deny policy's rules must be deny rules (deny_rule is not set)", i)
		}
		if len(d.GetDeniedPrincipals()) == 0 {
			return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule: denied_principals is empty", i)
		}
		if len(d.GetDeniedPermissions()) == 0 {
			return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule: denied_permissions is empty", i)
		}
		for _, pr := range d.GetDeniedPrincipals() {
			if !validDenyPrincipal(pr) {
				return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule.denied_principals value %q%s", i, pr, principalHint(pr))
			}
		}
		for _, pr := range d.GetExceptionPrincipals() {
			if pr == publicAllPrincipal {
				return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule.exception_principals value %q: %s cannot be an exception", i, pr, publicAllPrincipal)
			}
			if !validDenyPrincipal(pr) {
				return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule.exception_principals value %q%s", i, pr, principalHint(pr))
			}
		}
		for j, perms := range [][]string{d.GetDeniedPermissions(), d.GetExceptionPermissions()} {
			field := [...]string{"denied_permissions", "exception_permissions"}[j]
			for _, perm := range perms {
				if !denyPermissionRE.MatchString(perm) && !denyPermissionGroupRE.MatchString(perm) {
					return status.Errorf(codes.InvalidArgument,
						"invalid rules[%d].deny_rule.%s value %q: expected SERVICE_FQDN/RESOURCE.ACTION, such as iam.googleapis.com/roles.list, or a permission group, SERVICE_FQDN/RESOURCE.* or SERVICE_FQDN/*.*", i, field, perm)
				}
			}
		}
		if c := d.GetDenialCondition(); c != nil {
			if err := checkDenialCondition(c.GetExpression()); err != "" {
				return status.Errorf(codes.InvalidArgument, "invalid rules[%d].deny_rule.denial_condition %q: %s", i, c.GetExpression(), err)
			}
		}
	}
	return nil
}

// denialConditionFuncs are the CEL functions a denial condition may call:
// "The condition can use CEL functions that evaluate resource tags. Other
// functions and operators are not supported." (deny.proto); the tag
// functions are those of https://cloud.google.com/iam/help/conditions/resource-tags.
var denialConditionFuncs = map[string]bool{
	"resource.matchTag": true, "resource.matchTagId": true,
	"resource.hasTagKey": true, "resource.hasTagKeyId": true,
}

// callRE finds the function calls of a CEL expression.
var callRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)\s*\(`)

// checkDenialCondition returns what is wrong with a denial condition's
// expression, or "": it must call at least one tag function and no other
// function. Its syntax is not parsed further.
func checkDenialCondition(expr string) string {
	if strings.TrimSpace(expr) == "" {
		return "the expression is empty"
	}
	calls := callRE.FindAllStringSubmatch(expr, -1)
	if len(calls) == 0 {
		return "a denial condition must use the resource tag functions (resource.matchTag, resource.matchTagId, resource.hasTagKey, resource.hasTagKeyId)"
	}
	for _, c := range calls {
		if !denialConditionFuncs[c[1]] {
			return "function " + c[1] + " is not supported: only the resource tag functions (resource.matchTag, resource.matchTagId, resource.hasTagKey, resource.hasTagKeyId)"
		}
	}
	return ""
}

// denyEmailKinds are the deny principals that name an account by email, and
// the allow-policy kind whose SetKnownPrincipals entry gives its case ("" for
// service accounts, whose emails are always lower case). deleted: forms
// wrap the same identifiers.
var denyEmailKinds = []struct{ prefix, kind string }{
	{"principal://goog/subject/", "user"},
	{"principalSet://goog/group/", "group"},
	{"principal://iam.googleapis.com/projects/-/serviceAccounts/", ""},
}

// checkDenyEmailCase refuses a deny principal whose email is not written in
// its account's case: IAM validates email-based deny principals strictly and
// rejects one "if case does not match"
// (https://github.com/GoogleCloudPlatform/magic-modules/pull/5854, the
// Terraform provider's deny-policy support). The account's case is the one
// SetKnownPrincipals gave, else lower case. IAM's words are not public:
// the message is the fake's.
func (s *Server) checkDenyEmailCase(p *iamv2pb.Policy) error {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, r := range p.GetRules() {
		d := r.GetDenyRule()
		for j, prs := range [][]string{d.GetDeniedPrincipals(), d.GetExceptionPrincipals()} {
			field := [...]string{"denied_principals", "exception_principals"}[j]
			for _, pr := range prs {
				email, want := st.denyEmailLocked(pr)
				if email != want {
					return status.Errorf(codes.InvalidArgument,
						"invalid rules[%d].deny_rule.%s value %q: the email's case does not match the account's, %s (deny policies compare emails case-sensitively)", i, field, pr, want)
				}
			}
		}
	}
	return nil
}

// denyEmailLocked returns the email a deny principal names, and that email
// in its account's case; both "" when pr names no account by email. st.mu
// must be held.
func (st *state) denyEmailLocked(pr string) (email, canonical string) {
	v := strings.TrimPrefix(pr, "deleted:")
	for _, k := range denyEmailKinds {
		e, ok := strings.CutPrefix(v, k.prefix)
		if !ok {
			continue
		}
		e, _, _ = strings.Cut(e, "?uid=")
		if k.kind != "" {
			if given, known := st.principals[k.kind+":"+strings.ToLower(e)]; known {
				return e, strings.TrimPrefix(given, k.kind+":")
			}
		}
		return e, strings.ToLower(e)
	}
	return "", ""
}
