package iamtest

import (
	"slices"

	"cloud.google.com/go/iam/apiv1/iampb"
)

// SetProjectsWithoutOrganization makes the fake treat every project as one
// outside an organization, whose last owner cannot be removed: a
// SetIamPolicy on projects/P that leaves roles/owner without a member while
// the stored policy has one answers INVALID_ARGUMENT "Request contains an
// invalid argument." with a google.rpc.BadRequest saying why. Default: off
// (projects are taken to be in an organization, where the rule does not
// apply).
func (s *Server) SetProjectsWithoutOrganization(on bool) {
	s.setFid(func(f *fidelity) { f.noOrgProjects = on })
}

// checkLastOwner refuses a write that removes the last owner of a project
// outside an organization (see SetProjectsWithoutOrganization).
func checkLastOwner(key string, cur *iampb.Policy, next []*iampb.Binding) error {
	if projectOf(key) == "" || !hasOwner(cur.GetBindings()) || hasOwner(next) {
		return nil
	}
	return badRequest("policy.bindings",
		"The last owner (roles/owner) of "+key+", a project outside an organization, cannot be removed.")
}

// hasOwner reports whether bs grant roles/owner to any member.
func hasOwner(bs []*iampb.Binding) bool {
	return slices.ContainsFunc(bs, func(b *iampb.Binding) bool { return b.GetRole() == "roles/owner" && len(b.GetMembers()) > 0 })
}
