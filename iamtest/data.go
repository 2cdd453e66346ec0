package iamtest

import (
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
)

// SeedPolicy stores p as the policy of resource, as if it had been written
// long ago: no fault applies, no call is logged, and no stale read (see
// SetStaleReads) answers what the resource held before. p is checked as
// SetIamPolicy checks a policy (roles, members, conditions only with
// Version 3, audit configs, IAM's size limits:
// https://cloud.google.com/iam/docs/policies) and stored in IAM's form:
// members in stored case, duplicates merged, bindings without members
// dropped, the lowest version that represents it. The etag is p's when it
// carries one, else a fresh one. Service accounts may be named in any form
// the admin API accepts. It returns a copy of what was stored; a nil p
// removes the policy, so that reads answer the empty policy. It panics on an
// empty resource, a policy SetIamPolicy would refuse, or a project the
// registry does not know (see RegisterProject), saying what is wrong.
func (s *Server) SeedPolicy(resource string, p *iampb.Policy) *iampb.Policy {
	stored, err := s.seedValidPolicy(resource, p)
	if err != nil {
		panic("iamtest: SeedPolicy: " + err.Error())
	}
	return stored
}

// SeedServiceAccount stores the service account
// ACCOUNT_ID@PROJECT.iam.gserviceaccount.com as if CreateServiceAccount had
// made it long ago (https://cloud.google.com/iam/docs/service-accounts-create):
// it is visible at once whatever SetPropagationDelay and
// SetPropagationReads say, no fault applies and no call is logged. It
// returns a copy of the account (its Name, Email and UniqueId are what the
// admin API answers). It panics, saying what is wrong, where
// CreateServiceAccount would refuse: an account ID that is not 6 to 30
// lowercase letters, digits or hyphens starting with a letter, an account
// that exists, or a project the registry does not know (see
// RegisterProject).
func (s *Server) SeedServiceAccount(project, accountID string) *adminpb.ServiceAccount {
	sa, err := s.seedServiceAccount(project, accountID)
	if err != nil {
		panic("iamtest: SeedServiceAccount: " + err.Error())
	}
	return sa
}
