package policy

import "strings"

// memberForm is one form of member that IAM documents for allow policies.
type memberForm struct {
	// prefix starts every member of the form; for an exact form it is the
	// whole member.
	prefix string
	exact  bool
	// syntax is the form as the IAM docs write it, for error messages.
	syntax string
	// check returns why the value after prefix is malformed, or "".
	check func(v string) string
	// foldCase: IAM compares the value's email address or domain name
	// case-insensitively (before any "?uid="), so CanonicalMember lowercases it.
	foldCase bool
}

// Sources of the forms:
//
//	[binding]    the doc of Binding.members in the REST reference,
//	             https://cloud.google.com/resource-manager/reference/rest/v3/Policy#Binding
//	             (the same text as google.golang.org/api's cloudresourcemanager/v3
//	             Binding; google.iam.v1's policy.proto lists the older subset)
//	[principals] https://cloud.google.com/iam/docs/principal-identifiers
//	[gke]        https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity
//	[legacy]     https://cloud.google.com/storage/docs/access-control/iam#convenience-values
//
// memberForms is every member form IAM documents, the one table that both
// checkMember and CanonicalMember read. A member of no form here is refused.
var memberForms = [...]memberForm{
	// Anyone on the internet. [binding], [principals]
	{prefix: "allUsers", exact: true, syntax: "allUsers"},
	// Anyone authenticated with a Google account or service account. [binding], [principals]
	{prefix: "allAuthenticatedUsers", exact: true, syntax: "allAuthenticatedUsers"},
	// A Google account. [binding], [principals]
	{prefix: "user:", syntax: "user:EMAIL", check: checkEmail, foldCase: true},
	// A service account, or a Kubernetes service account through Workload
	// Identity: serviceAccount:PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME].
	// [binding], [principals], [gke]
	{prefix: "serviceAccount:", syntax: "serviceAccount:EMAIL or serviceAccount:PROJECT_ID.svc.id.goog[NAMESPACE/KSA]", check: checkServiceAccount, foldCase: true},
	// A Google group. [binding], [principals]
	{prefix: "group:", syntax: "group:EMAIL", check: checkEmail, foldCase: true},
	// Every user of a Google Workspace or Cloud Identity domain. [binding], [principals]
	{prefix: "domain:", syntax: "domain:DOMAIN", check: checkDomain, foldCase: true},
	// One identity: a workforce or workload identity pool subject
	// (principal://iam.googleapis.com/...), or principal://goog/subject/EMAIL.
	// [binding], [principals]
	{prefix: "principal://", syntax: "principal://HOST/PATH", check: checkPrincipalPath},
	// A set of identities: pool groups, attributes and whole pools, Google
	// groups, all service accounts of a project/folder/organization
	// (principalSet://cloudresourcemanager.googleapis.com/...). [binding], [principals]
	{prefix: "principalSet://", syntax: "principalSet://HOST/PATH", check: checkPrincipalPath},
	// Recently deleted principals, as IAM rewrites them in policies. [binding]
	{prefix: "deleted:user:", syntax: "deleted:user:EMAIL?uid=UNIQUE_ID", check: checkDeleted, foldCase: true},
	{prefix: "deleted:serviceAccount:", syntax: "deleted:serviceAccount:EMAIL?uid=UNIQUE_ID", check: checkDeleted, foldCase: true},
	{prefix: "deleted:group:", syntax: "deleted:group:EMAIL?uid=UNIQUE_ID", check: checkDeleted, foldCase: true},
	// A deleted workforce identity pool subject (no ?uid=). [binding]
	{prefix: "deleted:principal://", syntax: "deleted:principal://HOST/PATH", check: checkPrincipalPath},
	// Basic-role convenience values that IAM writes into some resources'
	// policies (Cloud Storage buckets, ...). [legacy]
	{prefix: "projectOwner:", syntax: "projectOwner:PROJECT_ID", check: checkProjectID},
	{prefix: "projectEditor:", syntax: "projectEditor:PROJECT_ID", check: checkProjectID},
	{prefix: "projectViewer:", syntax: "projectViewer:PROJECT_ID", check: checkProjectID},
}

// formOf returns the form member is written in, and the value after its
// prefix; ok is false when it is of no documented form.
func formOf(member string) (f *memberForm, value string, ok bool) {
	for i := range memberForms {
		f := &memberForms[i]
		if f.exact {
			if member == f.prefix {
				return f, "", true
			}
			continue
		}
		if v, found := strings.CutPrefix(member, f.prefix); found {
			return f, v, true
		}
	}
	return nil, "", false
}

// CanonicalMember returns member the way IAM stores and compares it: the
// email (or domain) part of user:, serviceAccount:, group: and domain:
// members lowercased, also inside deleted: members (deleted:user:EMAIL?uid=ID
// keeps its unique ID as written). Prefixes are compared as written: IAM's
// are case-sensitive. Every other member (allUsers, principal://...,
// principalSet://..., projectOwner:..., a malformed one) is returned
// unchanged.
//
// Two members are the same principal for this package exactly when their
// canonical forms are equal; mutations write the canonical form.
func CanonicalMember(member string) string {
	f, v, ok := formOf(member)
	if !ok || !f.foldCase {
		return member
	}
	email, uid, hasUID := strings.Cut(v, "?uid=")
	if !hasUID {
		return f.prefix + strings.ToLower(v)
	}
	return f.prefix + strings.ToLower(email) + "?uid=" + uid
}

// sameMember reports whether a and b name the same principal.
func sameMember(a, b string) bool {
	return a == b || CanonicalMember(a) == CanonicalMember(b)
}

// checkMember refuses a member that is of none of the forms IAM documents
// (memberForms), or malformed within its form, before it can fail a whole
// coalesced write (or, for a removal, match nothing and leave the
// principal its role). Adding and removing refuse exactly the same members.
func checkMember(m string) error {
	bad := func(why string) error {
		return invalid("invalid member %q: %s", m, why)
	}
	switch {
	case m == "":
		return bad("a member must not be empty")
	case strings.ContainsAny(m, " \t\r\n"):
		return bad("a member must not contain white space")
	}
	f, v, ok := formOf(m)
	if !ok {
		return bad("a member is one of " + memberSyntaxes())
	}
	if f.check != nil {
		if why := f.check(v); why != "" {
			return bad("a member of this form is " + f.syntax + ": " + why)
		}
	}
	return nil
}

// memberSyntaxes lists the documented forms, for an error message.
func memberSyntaxes() string {
	var b strings.Builder
	for i, f := range memberForms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.syntax)
	}
	return b.String()
}

func checkEmail(v string) string {
	i := strings.IndexByte(v, '@')
	if i <= 0 || i == len(v)-1 || strings.Count(v, "@") != 1 {
		return "the value must be an email address"
	}
	return ""
}

// checkServiceAccount accepts an email or a Workload Identity member,
// PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME].
func checkServiceAccount(v string) string {
	project, rest, ok := strings.Cut(v, ".svc.id.goog[")
	if !ok {
		return checkEmail(v)
	}
	inner, ok := strings.CutSuffix(rest, "]")
	ns, ksa, hasSlash := strings.Cut(inner, "/")
	if project == "" || !ok || !hasSlash || ns == "" || ksa == "" || strings.ContainsAny(ksa, "/[]") || strings.ContainsAny(ns, "[]") {
		return "a Kubernetes service account is PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME]"
	}
	return ""
}

func checkDomain(v string) string {
	if v == "" || strings.ContainsAny(v, "@/:") || !strings.Contains(v, ".") {
		return "the value must be a domain name such as example.com"
	}
	return ""
}

// checkPrincipalPath accepts HOST/PATH, both non-empty.
func checkPrincipalPath(v string) string {
	host, path, ok := strings.Cut(v, "/")
	if !ok || host == "" || path == "" {
		return "the identifier needs a host and a path"
	}
	return ""
}

func checkDeleted(v string) string {
	email, uid, found := strings.Cut(v, "?uid=")
	if !found || uid == "" {
		return "a deleted principal carries its unique ID"
	}
	return checkEmail(email)
}

func checkProjectID(v string) string {
	if v == "" || strings.ContainsAny(v, "@/") {
		return "the value must be a project ID"
	}
	return ""
}

// checkRole refuses an empty role or one with white space.
func checkRole(r string) error {
	if r == "" || strings.ContainsAny(r, " \t\r\n") {
		return invalid("invalid role %q: a role is roles/NAME, projects/P/roles/NAME or organizations/O/roles/NAME", r)
	}
	return nil
}
