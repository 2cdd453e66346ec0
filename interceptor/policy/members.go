package policy

import "strings"

// emailKinds are the member kinds whose value IAM compares case-insensitively:
// email addresses and domain names.
var emailKinds = map[string]bool{"user": true, "serviceAccount": true, "group": true, "domain": true}

// CanonicalMember returns member the way IAM stores and compares it: the
// email (or domain) part of user:, serviceAccount:, group: and domain:
// members lowercased, also inside deleted: members (deleted:user:EMAIL?uid=ID
// keeps its unique ID as written). Prefixes are compared as written: IAM's
// are case-sensitive. Every other member (allUsers, principal://...,
// principalSet://..., projectOwner:...) is returned unchanged.
//
// Two members are the same principal for this package exactly when their
// canonical forms are equal; mutations write the canonical form.
func CanonicalMember(member string) string {
	if rest, ok := strings.CutPrefix(member, "deleted:"); ok {
		kind, v, ok := strings.Cut(rest, ":")
		if !ok || !emailKinds[kind] {
			return member
		}
		email, uid, hasUID := strings.Cut(v, "?uid=")
		out := "deleted:" + kind + ":" + strings.ToLower(email)
		if hasUID {
			out += "?uid=" + uid
		}
		return out
	}
	kind, v, ok := strings.Cut(member, ":")
	if !ok || !emailKinds[kind] {
		return member
	}
	return kind + ":" + strings.ToLower(v)
}

// sameMember reports whether a and b name the same principal.
func sameMember(a, b string) bool {
	return a == b || CanonicalMember(a) == CanonicalMember(b)
}

// checkMember refuses what IAM would refuse for sure, before it can fail a
// whole coalesced write: an empty member, white space, a member without a
// kind, an email kind without an address. It is lenient on purpose: IAM
// grows new member kinds, and the server has the last word.
func checkMember(m string) error {
	bad := func(why string) error {
		return invalid("invalid member %q: %s", m, why)
	}
	switch {
	case m == "allUsers" || m == "allAuthenticatedUsers":
		return nil
	case m == "":
		return bad("a member must not be empty")
	case strings.ContainsAny(m, " \t\r\n"):
		return bad("a member must not contain white space")
	}
	rest, deleted := strings.CutPrefix(m, "deleted:")
	kind, v, ok := strings.Cut(rest, ":")
	if !ok || kind == "" || v == "" {
		return bad("a member is KIND:VALUE (user:, serviceAccount:, group:, domain:, principal:, ...) or allUsers / allAuthenticatedUsers")
	}
	if deleted {
		if kind != "user" && kind != "serviceAccount" && kind != "group" {
			return bad("a deleted principal is deleted:user:, deleted:serviceAccount: or deleted:group: EMAIL?uid=UNIQUE_ID")
		}
		email, uid, found := strings.Cut(v, "?uid=")
		if !found || uid == "" || !isEmail(email) {
			return bad("a deleted principal is deleted:" + kind + ":EMAIL?uid=UNIQUE_ID")
		}
		return nil
	}
	switch kind {
	case "user", "serviceAccount", "group":
		if !isEmail(v) {
			return bad("the value after " + kind + ": must be an email address")
		}
	case "domain":
		if strings.Contains(v, "@") {
			return bad("the value after domain: must be a domain name")
		}
	}
	return nil
}

func isEmail(s string) bool {
	i := strings.IndexByte(s, '@')
	return i > 0 && i < len(s)-1
}

// checkRole refuses an empty role or one with white space.
func checkRole(r string) error {
	if r == "" || strings.ContainsAny(r, " \t\r\n") {
		return invalid("invalid role %q: a role is roles/NAME, projects/P/roles/NAME or organizations/O/roles/NAME", r)
	}
	return nil
}
