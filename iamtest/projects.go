package iamtest

// RegisterProject makes the project with this ID and number known to the
// fake and turns the project registry on (off by default: every project
// exists). From then on a policy method asked about projects/X, X neither a
// registered ID nor number, answers as Resource Manager does for a project
// that does not exist or is hidden: PERMISSION_DENIED "Permission
// 'resourcemanager.projects.getIamPolicy' denied on resource
// '//cloudresourcemanager.googleapis.com/projects/X' (or it may not exist)."
// with ErrorInfo reason ReasonPermissionDenied; CreateServiceAccount and
// ListServiceAccounts refuse it the same way. projects/NUMBER then names the
// same policy as projects/ID. It panics, naming the value, on an ID that is
// not 6 to 30 lowercase letters, digits and hyphens starting with a letter,
// or a number that is not positive.
func (s *Server) RegisterProject(id string, number int64) {
	defer relabel()
	s.fake.RegisterProject(id, number)
}

// InviteOwner records that member (user:EMAIL) accepted an invitation to own
// projects/project, so that SetIamPolicy on the project may grant it
// roles/owner. https://cloud.google.com/resource-manager/reference/rest/v3/projects/setIamPolicy
// documents that a user "must be invited using the Cloud Platform console
// and must accept the invitation" to become an owner. The fake always
// applies that rule to projects (owners a policy already holds stay), as it
// applies the other rule the page documents, that projects do not support
// allUsers and allAuthenticatedUsers: both answer INVALID_ARGUMENT "Request
// contains an invalid argument." with a google.rpc.BadRequest naming the
// member. Member case does not matter. It panics unless member is
// user:EMAIL.
func (s *Server) InviteOwner(project, member string) {
	defer relabel()
	s.fake.InviteOwner(project, member)
}
