package iamtest

import (
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Service account bookkeeping shared by the admin service and the helpers:
// name parsing, lookup, eventual-consistency gating.

// parseAccountName splits a service account name. Accepted forms:
// "projects/PROJECT/serviceAccounts/EMAIL_OR_UNIQUE_ID" (PROJECT may be "-")
// and a bare EMAIL.
func parseAccountName(name string) (project, id string, err error) {
	if !strings.Contains(name, "/") && strings.Contains(name, "@") {
		return "-", name, nil
	}
	parts := strings.Split(name, "/")
	if len(parts) == 4 && parts[0] == "projects" && parts[1] != "" && parts[2] == "serviceAccounts" && parts[3] != "" {
		return parts[1], parts[3], nil
	}
	return "", "", status.Errorf(codes.InvalidArgument,
		"invalid service account name %q: expected projects/PROJECT_ID/serviceAccounts/EMAIL_OR_UNIQUE_ID, projects/-/serviceAccounts/EMAIL or EMAIL", name)
}

// accountName is the canonical resource name of an account.
func accountName(project, email string) string {
	return "projects/" + project + "/serviceAccounts/" + email
}

// lookupLocked finds the account that name designates (a bare EMAIL
// included), ignoring propagation, for a read (permission
// iam.serviceAccounts.get). st.mu must be held.
func (st *state) lookupLocked(name string) (*account, error) {
	return st.lookupAnyLocked(name, "iam.serviceAccounts.get")
}

// lookupAsLocked finds the account that name designates, ignoring
// propagation. A name with the project wildcard, projects/-/serviceAccounts/X,
// that designates no account answers PERMISSION_DENIED for perm, as the
// admin API documents ("if you try to get the service account
// projects/-/serviceAccounts/fake@example.com, which does not exist, the
// response contains an HTTP 403 Forbidden error instead of a 404 Not Found
// error": the comment of google.iam.admin.v1.ServiceAccount.name); any other
// name NOT_FOUND. st.mu must be held.
//
// A bare EMAIL, which the Go helpers (ServiceAccount, ...) accept, is no
// resource name of the admin API: refused INVALID_ARGUMENT (bareEmailRefusal).
func (st *state) lookupAsLocked(name, perm string) (*account, error) {
	if err := bareEmailRefusal(name); err != nil {
		return nil, err
	}
	return st.lookupAnyLocked(name, perm)
}

// bareEmailRefusal refuses a service account name that is a bare EMAIL:
// the admin API's names are projects/{PROJECT_ID}/serviceAccounts/{ACCOUNT}
// (the comment of google.iam.admin.v1.GetServiceAccountRequest.name, "Using
// - as a wildcard for the PROJECT_ID will infer the project from the
// account"), and its REST routes hold no other form. IAM's words for it are
// not in public sources: the message is the fake's.
func bareEmailRefusal(name string) error {
	if strings.Contains(name, "/") {
		return nil
	}
	return status.Errorf(codes.InvalidArgument,
		"invalid service account name %q: expected projects/PROJECT_ID/serviceAccounts/EMAIL_OR_UNIQUE_ID or projects/-/serviceAccounts/EMAIL", name)
}

// lookupAnyLocked is lookupAsLocked that also takes a bare EMAIL, for the
// fake's own helpers. st.mu must be held.
func (st *state) lookupAnyLocked(name, perm string) (*account, error) {
	project, id, err := parseAccountName(name)
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower(id)
	for _, a := range st.accounts {
		if a.sa.Email != lower && a.sa.UniqueId != id {
			continue
		}
		if project != "-" && project != a.sa.ProjectId {
			break
		}
		return a, nil
	}
	if strings.HasPrefix(name, "projects/-/") {
		return nil, accountPermissionDenied(perm, name)
	}
	return nil, status.Errorf(codes.NotFound, "Service account %s does not exist.", name)
}

// accountPermissionDenied is IAM's answer for an account the caller cannot
// see: "Permission PERM is required to perform this operation on service
// account NAME.", with an IAM_PERMISSION_DENIED ErrorInfo.
func accountPermissionDenied(perm, name string) error {
	return permissionDenied("iam.googleapis.com", perm, name,
		"Permission "+perm+" is required to perform this operation on service account "+name+".")
}

// canonicalLocked returns the key under which the policy of resource is
// stored: the canonical name of the service account it designates, or
// projects/ID for a registered projects/NUMBER, or resource itself.
func (st *state) canonicalLocked(resource string) string {
	if a, err := st.lookupLocked(resource); err == nil {
		return a.sa.Name
	}
	if key, err := st.projectKeyLocked(resource, "getIamPolicy"); err == nil {
		return key
	}
	return resource
}

// visibleLocked applies eventual consistency to one read of a: while the
// account is still propagating it answers the n-th hidden read with
// cs[min(n, len(cs)-1)] (NOT_FOUND when cs is empty), consuming one of the
// account's hidden reads. st.mu must be held.
func (st *state) visibleLocked(a *account, name string, now time.Time, delay time.Duration, cs []codes.Code) error {
	hidden := delay > 0 && now.Before(a.created.Add(delay))
	if a.readsLeft > 0 {
		a.readsLeft--
		hidden = true
	}
	if !hidden {
		return nil
	}
	code := codes.NotFound
	if len(cs) > 0 {
		code = cs[min(a.hidden, len(cs)-1)]
	}
	a.hidden++
	if code == codes.PermissionDenied {
		return accountPermissionDenied("iam.serviceAccounts.get", name)
	}
	return status.Errorf(codes.NotFound, "Service account %s does not exist.", name)
}

// readAccountLocked looks up an account for a read, with propagation gating
// answering cs (see visibleLocked).
func (st *state) readAccountLocked(name string, now time.Time, delay time.Duration, cs []codes.Code) (*account, error) {
	a, err := st.lookupLocked(name)
	if err != nil {
		return nil, err
	}
	if err := st.visibleLocked(a, name, now, delay, cs); err != nil {
		return nil, err
	}
	return a, nil
}

// accountReader returns a resolver for the admin service's policy methods:
// the resource must be an existing, visible service account (a hidden one
// answers NOT_FOUND), and its policy is stored under the account's
// canonical name.
func (s *Server) accountReader() resolver {
	now := s.now()
	delay, _ := s.propagation()
	return func(st *state, resource string) (string, error) {
		a, err := st.readAccountLocked(resource, now, delay, nil)
		if err != nil {
			return "", err
		}
		return a.sa.Name, nil
	}
}

// checkGrantsLocked refuses bindings that grant a role to a service account
// that does not exist: one the fake created and still hides (each such
// check counts as one read of the account), or, unless
// SetRefuseUnknownServiceAccounts(false), a user-managed one the fake does
// not hold (never created, or deleted). IAM answers INVALID_ARGUMENT
// "Service account EMAIL does not exist." (undocumented as an API contract:
// the message users report for a grant made right after
// CreateServiceAccount; https://cloud.google.com/iam/docs/service-accounts-create
// warns that a new account may not be usable at once). A grant to
// serviceAccount:EMAIL in a policy that also holds
// deleted:serviceAccount:EMAIL?uid=UID (a re-created account) is refused
// INVALID_ARGUMENT "Inconsistent representation of deleted member: ..."
// (https://cloud.google.com/iam/docs/release-notes, 2020-07-20: "Submitting
// an IAM policy that contains both deleted and active versions of the
// account ... will result in an error"; the words from
// https://github.com/GoogleCloudPlatform/k8s-config-connector/issues/279).
// Members already in cur are not checked. st.mu must be held.
func (st *state) checkGrantsLocked(cur *iampb.Policy, next []*iampb.Binding, now time.Time, delay time.Duration, refuseUnknown bool) error {
	had := map[string]bool{}
	for _, b := range cur.GetBindings() {
		for _, m := range b.GetMembers() {
			had[m] = true
		}
	}
	deleted := map[string]string{} // EMAIL -> its deleted: member in next
	for _, b := range next {
		for _, m := range b.Members {
			if rest, ok := strings.CutPrefix(strings.ToLower(m), "deleted:serviceaccount:"); ok {
				if email, _, ok := strings.Cut(rest, "?uid="); ok {
					deleted[email] = m
				}
			}
		}
	}
	for _, b := range next {
		for _, m := range b.Members {
			if err := st.checkPrincipalLocked(m, had); err != nil {
				return err
			}
			email, ok := strings.CutPrefix(m, "serviceAccount:")
			if !ok || had[m] || !strings.Contains(email, "@") {
				continue
			}
			had[m] = true // check each account once per write
			if d, ok := deleted[strings.ToLower(email)]; ok {
				return status.Errorf(codes.InvalidArgument,
					"Inconsistent representation of deleted member: '%s' and '%s'", d, m)
			}
			missing := status.Errorf(codes.InvalidArgument, "Service account %s does not exist.", email)
			a, found := st.accounts[email]
			if !found {
				if refuseUnknown && userManagedAccount(email) {
					return missing
				}
				continue
			}
			if st.visibleLocked(a, email, now, delay, nil) != nil {
				return missing
			}
		}
	}
	return nil
}

// checkPrincipalLocked refuses a grant to a user or group that
// SetKnownPrincipals does not list, as IAM refuses a member that does not
// exist: INVALID_ARGUMENT "User EMAIL does not exist." ("Group ...").
// st.mu must be held.
func (st *state) checkPrincipalLocked(m string, had map[string]bool) error {
	if st.principals == nil || had[m] {
		return nil
	}
	kind, email, _ := strings.Cut(m, ":")
	if _, known := st.principals[canonicalMember(m)]; known || (kind != "user" && kind != "group") {
		return nil
	}
	what := "User"
	if kind == "group" {
		what = "Group"
	}
	return status.Errorf(codes.InvalidArgument, "%s %s does not exist.", what, email)
}

// userManagedAccount reports whether email is a user-managed service
// account's, NAME@PROJECT.iam.gserviceaccount.com, and not a Google-managed
// service agent's (NAME@gcp-sa-SERVICE.iam.gserviceaccount.com): see
// https://cloud.google.com/iam/docs/service-account-types.
func userManagedAccount(email string) bool {
	_, domain, _ := strings.Cut(email, "@")
	project, ok := strings.CutSuffix(strings.ToLower(domain), ".iam.gserviceaccount.com")
	return ok && project != "" && !strings.HasPrefix(project, "gcp-sa-")
}

// validAccountID reports whether id is a valid service account ID: 6 to 30
// lowercase letters, digits and hyphens, starting with a letter and not
// ending with a hyphen.
func validAccountID(id string) bool { return validShortID(id) }

// checkAccountID refuses a CreateServiceAccount account_id as IAM does,
// INVALID_ARGUMENT with a google.rpc.DebugInfo whose detail repeats the
// message: the length first ('The account ID "ID" does not have a length
// between 6 and 30.', as gcloud shows it in
// https://github.com/google/litmus/issues/107 and
// https://github.com/DataDog/stratus-red-team/issues/294), then the pattern
// ('ID does not match [a-z][a-z\d\-]*[a-z\d].', with its debugInfo in
// https://github.com/GoogleCloudPlatform/cloud-code-intellij/issues/2062).
func checkAccountID(id string) error {
	var msg string
	switch {
	case len(id) < 6 || len(id) > 30:
		msg = fmt.Sprintf("The account ID %q does not have a length between 6 and 30.", id)
	case !validAccountID(id):
		msg = id + ` does not match [a-z][a-z\d\-]*[a-z\d].`
	default:
		return nil
	}
	return withDetails(status.New(codes.InvalidArgument, msg), &errdetails.DebugInfo{Detail: msg}).Err()
}

// validShortID reports whether id is 6 to 30 lowercase letters, digits and
// hyphens, starting with a letter and not ending with a hyphen: the rule
// for a service account ID and for a project ID alike.
func validShortID(id string) bool {
	if len(id) < 6 || len(id) > 30 || id[0] < 'a' || id[0] > 'z' || id[len(id)-1] == '-' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ServiceAccount returns a copy of the service account that name designates
// (projects/P/serviceAccounts/EMAIL_OR_UNIQUE_ID, projects/-/serviceAccounts/EMAIL
// or EMAIL), whether or not it is still propagating, or nil when there is
// none: what the fake holds, not what a read would answer.
func (s *Server) ServiceAccount(name string) *adminpb.ServiceAccount {
	var out *adminpb.ServiceAccount
	s.withAccount(name, func(a *account) { out = proto.Clone(a.sa).(*adminpb.ServiceAccount) })
	return out
}

// ServiceAccountKeys returns copies of the user-managed keys minted for the
// service account that name designates, oldest first, or nil when there is
// no such account. A test counts them to see how many keys a retried
// CreateServiceAccountKey minted: each call mints a new one, up to the 10
// per account IAM allows (https://cloud.google.com/iam/quotas), after which
// CreateServiceAccountKey answers FAILED_PRECONDITION "Precondition check
// failed.".
func (s *Server) ServiceAccountKeys(name string) []*adminpb.ServiceAccountKey {
	var out []*adminpb.ServiceAccountKey
	s.withAccount(name, func(a *account) {
		out = make([]*adminpb.ServiceAccountKey, len(a.keys))
		for i, k := range a.keys {
			out[i] = proto.Clone(k).(*adminpb.ServiceAccountKey)
		}
	})
	return out
}

// withAccount runs f under the store's lock on the service account name
// designates (ignoring propagation); it does not call f when there is none.
func (s *Server) withAccount(name string, f func(a *account)) {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if a, err := st.lookupLocked(name); err == nil {
		f(a)
	}
}

// newAccountLocked mints the service account email of project: the next
// unique ID (also its OAuth2 client ID), its name and a new etag. The caller
// holds st.mu, fills in the rest and stores it.
func (st *state) newAccountLocked(project, email string) *adminpb.ServiceAccount {
	st.idSeq++
	uid := uniqueID(st.idSeq)
	return &adminpb.ServiceAccount{
		Name:           accountName(project, email),
		ProjectId:      project,
		UniqueId:       uid,
		Email:          email,
		Oauth2ClientId: uid,
		Etag:           st.nextEtagLocked(),
	}
}

// uniqueID mints the n-th 21-digit numeric unique ID.
func uniqueID(n uint64) string { return fmt.Sprintf("1%020d", n) }
