package iamtest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// seedValidPolicy stores p as the policy of resource as if SetIamPolicy had
// written it long ago (no fault, no call logged, no stale read of it),
// after the checks SetIamPolicy makes of its content. It returns what was
// stored, or an error saying what is wrong with p or resource.
func (s *Server) seedValidPolicy(resource string, p *iampb.Policy) (*iampb.Policy, error) {
	if err := checkResource(resource); err != nil {
		return nil, errors.New(status.Convert(err).Message())
	}
	if p == nil {
		if err := s.checkSeedProject(resource); err != nil {
			return nil, err
		}
		return s.seedPolicy(resource, nil), nil
	}
	bindings, err := normalizeBindings(p.GetBindings(), p.GetVersion())
	if err == nil {
		err = validateAuditConfigs(p.GetAuditConfigs())
	}
	if err == nil {
		err = s.checkSeedProject(resource)
	}
	if err != nil {
		return nil, errors.New(status.Convert(err).Message())
	}
	stored := proto.Clone(p).(*iampb.Policy)
	stored.Bindings = bindings
	return s.seedPolicy(resource, stored), nil
}

// checkSeedProject refuses a project the registry does not know.
func (s *Server) checkSeedProject(resource string) error {
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, err := st.projectKeyLocked(resource, "setIamPolicy"); err != nil {
		return fmt.Errorf("project %s is not registered (see RegisterProject)", resource)
	}
	return nil
}

// seedServiceAccount is SeedServiceAccount answering an error instead of
// panicking.
func (s *Server) seedServiceAccount(project, accountID string) (*adminpb.ServiceAccount, error) {
	if project == "" || project == "-" || strings.Contains(project, "/") {
		return nil, fmt.Errorf("invalid project %q: a project ID is required", project)
	}
	if !validAccountID(accountID) {
		return nil, fmt.Errorf("invalid account ID %q: it must be 6 to 30 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen", accountID)
	}
	email := accountID + "@" + project + ".iam.gserviceaccount.com"
	created := s.now().Add(-100 * 365 * 24 * time.Hour) // long before any propagation window
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.checkProjectForAccountsLocked(project, "iam.serviceAccounts.create"); err != nil {
		return nil, fmt.Errorf("project %s is not registered (see RegisterProject)", project)
	}
	if _, exists := st.accounts[email]; exists {
		return nil, fmt.Errorf("service account %s already exists", email)
	}
	sa := st.newAccountLocked(project, email)
	st.accounts[email] = &account{sa: sa, created: created}
	return proto.Clone(sa).(*adminpb.ServiceAccount), nil
}
