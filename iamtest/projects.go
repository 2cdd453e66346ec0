package iamtest

// RegisterProject makes the project with this ID and number known to the
// fake, and turns the project registry on (it is off by default, when every
// project exists). From then on, as Resource Manager answers for a project
// that does not exist or that the caller cannot see, a policy method asked
// about projects/X, X neither a registered ID nor a registered number,
// answers PERMISSION_DENIED "Permission
// 'resourcemanager.projects.getIamPolicy' denied on resource
// '//cloudresourcemanager.googleapis.com/projects/X' (or it may not exist)."
// with a google.rpc.ErrorInfo of reason ReasonPermissionDenied
// (https://cloud.google.com/resource-manager/reference/rest/v3/projects/getIamPolicy
// documents the permission); CreateServiceAccount and ListServiceAccounts
// refuse such a project the same way. projects/NUMBER then names the same
// policy as projects/ID, as in IAM; without the registry they are two
// resources. It panics on an ID that is not 6 to 30 lowercase letters,
// digits and hyphens starting with a letter
// (https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin),
// or a number that is not positive, naming the value.
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
