package fakeiam

import (
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
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

// lookupLocked finds the account that name designates, ignoring propagation.
// st.mu must be held.
func (st *state) lookupLocked(name string) (*account, error) {
	project, id, err := parseAccountName(name)
	if err != nil {
		return nil, err
	}
	for _, a := range st.accounts {
		if a.sa.Email != id && a.sa.UniqueId != id {
			continue
		}
		if project != "-" && project != a.sa.ProjectId {
			break
		}
		return a, nil
	}
	return nil, status.Errorf(codes.NotFound, "Service account %s does not exist.", name)
}

// canonicalLocked returns the canonical name of the service account that
// resource designates, or resource itself when it designates none.
func (st *state) canonicalLocked(resource string) string {
	if a, err := st.lookupLocked(resource); err == nil {
		return a.sa.Name
	}
	return resource
}

// visibleLocked applies eventual consistency to one read of a: it answers
// NOT_FOUND while the account is still propagating, consuming one of the
// account's hidden reads. st.mu must be held.
func (st *state) visibleLocked(a *account, name string, now time.Time, delay time.Duration) error {
	hidden := delay > 0 && now.Before(a.created.Add(delay))
	if a.readsLeft > 0 {
		a.readsLeft--
		hidden = true
	}
	if hidden {
		return status.Errorf(codes.NotFound, "Service account %s does not exist.", name)
	}
	return nil
}

// readAccountLocked looks up an account for a read, with propagation gating.
func (st *state) readAccountLocked(name string, now time.Time, delay time.Duration) (*account, error) {
	a, err := st.lookupLocked(name)
	if err != nil {
		return nil, err
	}
	if err := st.visibleLocked(a, name, now, delay); err != nil {
		return nil, err
	}
	return a, nil
}

// accountReader returns a resolver for the admin service's policy methods:
// the resource must be an existing, visible service account, and its policy
// is stored under the account's canonical name.
func (s *Server) accountReader() resolver {
	now := s.now()
	delay, _ := s.propagation()
	return func(st *state, resource string) (string, error) {
		a, err := st.readAccountLocked(resource, now, delay)
		if err != nil {
			return "", err
		}
		return a.sa.Name, nil
	}
}

// validAccountID reports whether id is a valid service account ID: 6 to 30
// lowercase letters, digits and hyphens, starting with a letter and not
// ending with a hyphen.
func validAccountID(id string) bool {
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
// (in any form GetServiceAccount accepts), ignoring propagation, or nil when
// there is none.
func (s *Server) ServiceAccount(name string) *adminpb.ServiceAccount {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	a, err := st.lookupLocked(name)
	if err != nil {
		return nil
	}
	return proto.Clone(a.sa).(*adminpb.ServiceAccount)
}

// ServiceAccountKeys returns copies of the keys minted for the service account
// that name designates, oldest first, or nil when there is no such account.
// Tests use it to see how many keys a retried CreateServiceAccountKey minted.
func (s *Server) ServiceAccountKeys(name string) []*adminpb.ServiceAccountKey {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	a, err := st.lookupLocked(name)
	if err != nil {
		return nil
	}
	out := make([]*adminpb.ServiceAccountKey, len(a.keys))
	for i, k := range a.keys {
		out[i] = proto.Clone(k).(*adminpb.ServiceAccountKey)
	}
	return out
}

// uniqueID mints the n-th 21-digit numeric unique ID.
func uniqueID(n uint64) string { return fmt.Sprintf("1%020d", n) }
