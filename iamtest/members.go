package iamtest

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The fake's own table of IAM principal identifiers. It shares nothing with
// the library it tests. Source: the `members` field of google.iam.v1.Binding
// (google/iam/v1/policy.proto) and
// https://cloud.google.com/iam/docs/principal-identifiers.

// memberKind is one row of the table: a prefix, the check of the value after
// it, and whether IAM compares (and stores) that value without case.
type memberKind struct {
	prefix string
	check  func(v string) string // "" when v is valid, else why not
	fold   bool                  // compared case-insensitively, stored lower case
}

// memberKinds is the table. The order matters only for the error message.
var memberKinds = []memberKind{
	{"user:", checkEmail, true},
	{"serviceAccount:", checkServiceAccount, true},
	{"group:", checkEmail, true},
	{"domain:", checkDomain, true},
	{"principal://", checkIdentifier, false},
	{"principalSet://", checkIdentifier, false},
	{"deleted:", checkDeleted, true},
}

// deletedKinds are the principals a deleted: member may wrap. The email
// kinds need ?uid=UNIQUE_ID; principal:// ones (deleted workforce identities)
// do not.
var deletedKinds = []string{"user:", "serviceAccount:", "group:", "principal://"}

func checkEmail(v string) string {
	if i := strings.IndexByte(v, '@'); i <= 0 || i == len(v)-1 {
		return "the value must be an email address"
	}
	return ""
}

// checkServiceAccount accepts an email address or a Kubernetes service
// account of workload identity federation for GKE,
// PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME]
// (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity).
func checkServiceAccount(v string) string {
	if pool, ksa, ok := strings.Cut(v, ".svc.id.goog["); ok {
		ns, name, ok := strings.Cut(strings.TrimSuffix(ksa, "]"), "/")
		if pool == "" || !strings.HasSuffix(ksa, "]") || !ok || ns == "" || name == "" || strings.ContainsAny(name, "/[]") {
			return "a workload identity service account must be PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME]"
		}
		return ""
	}
	if checkEmail(v) != "" {
		return "the value must be an email address or PROJECT_ID.svc.id.goog[NAMESPACE/KSA_NAME]"
	}
	return ""
}

func checkDomain(v string) string {
	if v == "" || strings.Contains(v, "@") {
		return "the value must be a domain name"
	}
	return ""
}

func checkIdentifier(v string) string {
	if v == "" {
		return "the identifier after // must not be empty"
	}
	return ""
}

func checkDeleted(v string) string {
	for _, k := range deletedKinds {
		rest, ok := strings.CutPrefix(v, k)
		if !ok {
			continue
		}
		if k == "principal://" {
			return checkIdentifier(rest)
		}
		email, uid, found := strings.Cut(rest, "?uid=")
		if !found || uid == "" || checkEmail(email) != "" {
			return "a deleted principal must be deleted:" + k + "EMAIL?uid=UNIQUE_ID"
		}
		return ""
	}
	return "a deleted principal must start with deleted:user:, deleted:serviceAccount:, deleted:group: or deleted:principal://"
}

// validateMember checks one binding member against the table.
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
	for _, k := range memberKinds {
		if v, ok := strings.CutPrefix(m, k.prefix); ok {
			if why := k.check(v); why != "" {
				return bad(why)
			}
			return nil
		}
	}
	return bad("a member must be allUsers, allAuthenticatedUsers, or start with " +
		"user:, serviceAccount:, group:, domain:, principal://, principalSet:// or deleted:")
}

// canonicalMember is the form IAM stores and compares a valid member in: the
// value after user:, serviceAccount:, group: and domain: in lower case (also
// inside deleted:, whose inner kind keeps its case) (IAM compares these case-insensitively and answers them in lower
// case; https://cloud.google.com/iam/docs/principal-identifiers says email
// addresses and domains are not case-sensitive), principal:// and
// principalSet:// identifiers as sent.
func canonicalMember(m string) string {
	for _, k := range memberKinds {
		if v, ok := strings.CutPrefix(m, k.prefix); ok {
			if !k.fold {
				return m
			}
			if k.prefix == "deleted:" { // the inner member's kind keeps its case
				return k.prefix + canonicalMember(v)
			}
			return k.prefix + strings.ToLower(v)
		}
	}
	return m
}
