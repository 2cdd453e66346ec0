package deny

import (
	"strings"
	"unicode/utf8"
)

// PublicAll is the deny-policy identifier of "any principal that is on the
// internet, even if they do not have a Google Account or are not logged
// in". A rule may deny it; it can never be an exception.
const PublicAll = "principalSet://goog/public:all"

// principalForm is one form of principal identifier that IAM documents for
// deny policies (IAM v2). Every form is a fixed prefix followed by segments
// separated by "/", each checked by one of the seg* checks.
type principalForm struct {
	// prefix starts every identifier of the form; for an exact form it is
	// the whole identifier.
	prefix string
	exact  bool
	// syntax is the form as the IAM docs write it, for error messages.
	syntax string
	// segs checks the value after prefix, split at "/": one check per
	// segment, in order; nil for an exact form.
	segs []segCheck
	// deleted: the value ends in ?uid=UID (a recently deleted principal).
	deleted bool
	// free: the last segment is a value of the pool's own (a subject, a
	// group ID, an attribute's value), which may hold "/".
	free bool
}

// segCheck returns why one segment of an identifier is malformed, or "".
type segCheck func(s string) string

// Sources of the forms:
//
//	[deny.proto]  the comment of DenyRule.denied_principals in
//	              google/iam/v2/deny.proto (iam/apiv2/iampb), and the fuller list
//	              of the iam v2 discovery document (GoogleIamV2DenyRule.deniedPrincipals)
//	[principals]  https://cloud.google.com/iam/docs/principal-identifiers
//	              ("Principal identifiers for deny policies")
//
// principalForms is every principal identifier IAM documents for deny
// rules, the one table that checkPrincipal reads for denied and exception
// principals alike (an exception may be any of them but PublicAll). An
// identifier of no form here is refused, naming the forms.
var principalForms = [...]principalForm{
	// Anyone on the internet. [deny.proto]
	{prefix: PublicAll, exact: true, syntax: PublicAll},
	// A Google Account. [deny.proto], [principals]
	{prefix: "principal://goog/subject/", syntax: "principal://goog/subject/EMAIL", segs: []segCheck{email}},
	// A Google group. [deny.proto], [principals]
	{prefix: "principalSet://goog/group/", syntax: "principalSet://goog/group/GROUP_EMAIL", segs: []segCheck{email}},
	// A service account. [deny.proto], [principals]
	{prefix: "principal://iam.googleapis.com/projects/-/serviceAccounts/", syntax: "principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL", segs: []segCheck{email}},
	// Every principal of a Google Workspace or Cloud Identity customer. [deny.proto], [principals]
	{prefix: "principalSet://goog/cloudIdentityCustomerId/", syntax: "principalSet://goog/cloudIdentityCustomerId/CUSTOMER_ID", segs: []segCheck{alnum}},
	// Workforce identity pools: one subject, a group, an attribute value,
	// the whole pool. [deny.proto], [principals]
	{prefix: "principal://iam.googleapis.com/locations/global/workforcePools/", syntax: "principal://iam.googleapis.com/locations/global/workforcePools/POOL_ID/subject/SUBJECT", segs: []segCheck{poolID, lit("subject"), value}, free: true},
	{prefix: "principalSet://iam.googleapis.com/locations/global/workforcePools/", syntax: "principalSet://iam.googleapis.com/locations/global/workforcePools/POOL_ID/{group/GROUP_ID | attribute.NAME/VALUE | *}", segs: []segCheck{poolID, poolSet, value}, free: true},
	// Workload identity pools, likewise, under a project number. [deny.proto], [principals]
	{prefix: "principal://iam.googleapis.com/projects/", syntax: "principal://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/POOL_ID/subject/SUBJECT", segs: []segCheck{number, lit("locations"), lit("global"), lit("workloadIdentityPools"), poolID, lit("subject"), value}, free: true},
	{prefix: "principalSet://iam.googleapis.com/projects/", syntax: "principalSet://iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/POOL_ID/{group/GROUP_ID | attribute.NAME/VALUE | *}", segs: []segCheck{number, lit("locations"), lit("global"), lit("workloadIdentityPools"), poolID, poolSet, value}, free: true},
	// All service accounts (or service agents) of a project, folder or
	// organization. [principals]
	{prefix: "principalSet://cloudresourcemanager.googleapis.com/", syntax: "principalSet://cloudresourcemanager.googleapis.com/{projects|folders|organizations}/NUMBER/type/{ServiceAccount|ServiceAgent}", segs: []segCheck{oneOf("projects", "folders", "organizations"), number, lit("type"), oneOf("ServiceAccount", "ServiceAgent")}},
	// Recently deleted principals, as IAM rewrites them in deny rules. [deny.proto]
	{prefix: "deleted:principal://goog/subject/", syntax: "deleted:principal://goog/subject/EMAIL?uid=UID", segs: []segCheck{email}, deleted: true},
	{prefix: "deleted:principalSet://goog/group/", syntax: "deleted:principalSet://goog/group/GROUP_EMAIL?uid=UID", segs: []segCheck{email}, deleted: true},
	{prefix: "deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/", syntax: "deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL?uid=UID", segs: []segCheck{email}, deleted: true},
	// A deleted workforce pool subject (no ?uid=). [deny.proto]
	{prefix: "deleted:principal://iam.googleapis.com/locations/global/workforcePools/", syntax: "deleted:principal://iam.googleapis.com/locations/global/workforcePools/POOL_ID/subject/SUBJECT", segs: []segCheck{poolID, lit("subject"), value}, free: true},
}

// formOf returns the form p is written in, and the value after its prefix;
// ok is false when it is of no documented form. The longest prefix wins.
func formOf(p string) (f *principalForm, value string, ok bool) {
	for i := range principalForms {
		g := &principalForms[i]
		if g.exact {
			if p == g.prefix {
				return g, "", true
			}
			continue
		}
		if v, found := strings.CutPrefix(p, g.prefix); found && (f == nil || len(g.prefix) > len(f.prefix)) {
			f, value, ok = g, v, true
		}
	}
	return f, value, ok
}

// checkPrincipal returns why p is not a deny-policy principal identifier
// (exception: in exception_principals), or "".
func checkPrincipal(p string, exception bool) string {
	switch {
	case p == "":
		return "a principal must not be empty"
	case strings.ContainsAny(p, " \t\r\n"):
		return "a principal must not contain white space"
	case exception && p == PublicAll:
		return PublicAll + " cannot be an exception"
	}
	f, v, ok := formOf(p)
	if !ok {
		if hint := v1Hint(p); hint != "" {
			return hint
		}
		return "a deny-policy principal is one of " + principalSyntaxes()
	}
	if f.exact {
		return ""
	}
	if f.deleted {
		var uid string
		var found bool
		v, uid, found = strings.Cut(v, "?uid=")
		if !found || uid == "" || strings.Trim(uid, "0123456789") != "" {
			return "a principal of this form is " + f.syntax + ": a deleted principal carries its numeric unique ID"
		}
	}
	segs := strings.Split(v, "/")
	if f.free && len(segs) > len(f.segs) {
		// The value (a subject, an attribute's value, a group ID) is
		// the pool's own and may hold "/" (Workload Identity
		// Federation's attribute.repository/my-org/my-repo,
		// subject/repo:my-org/my-repo:ref:refs/heads/main).
		segs = append(segs[:len(f.segs)-1], strings.Join(segs[len(f.segs)-1:], "/"))
	}
	if len(segs) != len(f.segs) {
		// poolSet's "*" has no value segment after it.
		if !(len(segs) == len(f.segs)-1 && segs[len(segs)-1] == "*") {
			return "a principal of this form is " + f.syntax
		}
	}
	for i, s := range segs {
		if s == "*" && i != len(segs)-1 {
			return "a principal of this form is " + f.syntax + ": * (the whole pool) ends the identifier"
		}
		if why := f.segs[i](s); why != "" {
			return "a principal of this form is " + f.syntax + ": " + why
		}
	}
	return ""
}

// v1Hint names the mistake of an allow-policy (IAM v1) member given where a
// deny policy wants a v2 identifier.
func v1Hint(p string) string {
	for _, pre := range []string{"user:", "group:", "serviceAccount:", "domain:", "deleted:user:", "deleted:group:", "deleted:serviceAccount:"} {
		if strings.HasPrefix(p, pre) {
			return "that is an allow-policy member (IAM v1): deny policies name principals with IAM v2 identifiers, such as principal://goog/subject/EMAIL, principalSet://goog/group/GROUP_EMAIL, principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL"
		}
	}
	if p == "allUsers" || p == "allAuthenticatedUsers" {
		return "that is an allow-policy member (IAM v1): in a deny policy, anyone on the internet is " + PublicAll
	}
	return ""
}

// principalSyntaxes lists the documented forms, for an error message.
func principalSyntaxes() string {
	var b strings.Builder
	for i, f := range principalForms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.syntax)
	}
	return b.String()
}

func email(s string) string {
	i := strings.IndexByte(s, '@')
	if i <= 0 || i == len(s)-1 || strings.Count(s, "@") != 1 || !strings.Contains(s[i+1:], ".") || strings.ContainsAny(s, "?") {
		return "the value must be an email address"
	}
	return ""
}

func alnum(s string) string {
	if s == "" || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		return "the customer ID must be letters and digits"
	}
	return ""
}

func number(s string) string {
	if s == "" || s[0] == '0' || strings.Trim(s, "0123456789") != "" {
		return "a number is expected, not " + quote(s)
	}
	return ""
}

// poolID accepts a pool ID: lowercase letters, digits and dashes, starting
// with a letter or digit.
func poolID(s string) string {
	if s == "" || s[0] == '-' || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return "a pool ID is lowercase letters, digits and dashes, not " + quote(s)
	}
	return ""
}

// poolSet accepts what follows a pool's ID in a principalSet: group,
// attribute.NAME, or * (the whole pool).
func poolSet(s string) string {
	if s == "group" || s == "*" {
		return ""
	}
	if name, ok := strings.CutPrefix(s, "attribute."); ok && name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
		return ""
	}
	return "after the pool ID comes group/GROUP_ID, attribute.NAME/VALUE or *, not " + quote(s)
}

func value(s string) string {
	if s == "" {
		return "a segment is empty"
	}
	return ""
}

func lit(want string) segCheck {
	return func(s string) string {
		if s != want {
			return "expected " + quote(want) + ", not " + quote(s)
		}
		return ""
	}
}

func oneOf(want ...string) segCheck {
	return func(s string) string {
		for _, w := range want {
			if s == w {
				return ""
			}
		}
		return "expected one of " + strings.Join(want, ", ") + ", not " + quote(s)
	}
}

func quote(s string) string { return "\"" + s + "\"" }

// checkPermission returns why p is not a permission in IAM v2's form
// SERVICE_FQDN/RESOURCE.ACTION (deny.proto: "{service_fqdn}/{resource}.{verb}",
// such as iam.googleapis.com/roles.list) nor a permission group,
// SERVICE_FQDN/RESOURCE.* or SERVICE_FQDN/*.*
// (https://cloud.google.com/iam/docs/deny-overview#permission-groups), or "".
func checkPermission(p string) string {
	service, rest, ok := strings.Cut(p, "/")
	if !ok {
		if strings.Count(p, ".") >= 2 {
			return "that is an IAM v1 permission (SERVICE.RESOURCE.ACTION): deny policies use SERVICE_FQDN/RESOURCE.ACTION, such as iam.googleapis.com/roles.list"
		}
		return "a permission is SERVICE_FQDN/RESOURCE.ACTION, such as iam.googleapis.com/roles.list"
	}
	labels := strings.Split(service, ".")
	if len(labels) < 2 {
		return "the service must be a fully qualified domain name, such as iam.googleapis.com"
	}
	for _, l := range labels {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "the service must be a fully qualified domain name, such as iam.googleapis.com"
		}
	}
	if rest == "*.*" {
		return "" // a permission group: all of the service's permissions
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 {
		return "after the service comes RESOURCE.ACTION, such as roles.list"
	}
	if parts[len(parts)-1] == "*" {
		parts = parts[:len(parts)-1] // a permission group: all of a resource type's permissions
	}
	for _, s := range parts {
		if s == "" || !isLetter(s[0]) || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
			return "after the service comes RESOURCE.ACTION, letters and digits, such as roles.list"
		}
	}
	return ""
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// maxDescription is the length limit of a rule's description (policy.proto:
// "This value can be up to 256 characters").
const maxDescription = 256

func descriptionTooLong(d string) bool { return utf8.RuneCountInString(d) > maxDescription }
