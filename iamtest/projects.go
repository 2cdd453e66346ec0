package iamtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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
	if !validProjectID(id) {
		panic(fmt.Sprintf("iamtest: RegisterProject: invalid project ID %q: 6 to 30 lowercase letters, digits or hyphens, starting with a letter", id))
	}
	if number <= 0 {
		panic(fmt.Sprintf("iamtest: RegisterProject: invalid project number %d: it must be positive", number))
	}
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	n := strconv.FormatInt(number, 10)
	st.projects[id] = n
	st.numbers[n] = id
}

// validProjectID applies the rules of https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin.
func validProjectID(id string) bool { return validShortID(id) }

// projectOf returns X when resource is projects/X (one segment), else "".
func projectOf(resource string) string {
	id, ok := strings.CutPrefix(resource, "projects/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

// projectKeyLocked maps projects/NUMBER to projects/ID and refuses a project
// the registry does not know, when the registry is on. Other resources pass
// unchanged. verb is the IAM method, for the message.
func (st *state) projectKeyLocked(resource, verb string) (string, error) {
	x := projectOf(resource)
	if x == "" || len(st.projects) == 0 {
		return resource, nil
	}
	if _, ok := st.projects[x]; ok {
		return resource, nil
	}
	if id, ok := st.numbers[x]; ok {
		return "projects/" + id, nil
	}
	perm := "resourcemanager.projects." + verb
	full := "//cloudresourcemanager.googleapis.com/" + resource
	return "", permissionDenied("cloudresourcemanager.googleapis.com", perm, resource,
		"Permission '"+perm+"' denied on resource '"+full+"' (or it may not exist).")
}

// checkProjectForAccountsLocked refuses an unregistered project for the
// service account methods, when the registry is on.
func (st *state) checkProjectForAccountsLocked(project, perm string) error {
	if len(st.projects) == 0 {
		return nil
	}
	if _, ok := st.projects[project]; ok {
		return nil
	}
	return permissionDenied("iam.googleapis.com", perm, "projects/"+project,
		"Permission '"+perm+"' denied on resource (or it may not exist).")
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
	if !strings.HasPrefix(member, "user:") || validateMember(member) != nil {
		panic(fmt.Sprintf("iamtest: InviteOwner: member %q is not user:EMAIL (only users need an invitation)", member))
	}
	st := s.state
	st.mu.Lock()
	st.invited["projects/"+project+" "+canonicalMember(member)] = true
	st.mu.Unlock()
}

// checkProjectRules applies the rules of a project's policy that
// https://cloud.google.com/resource-manager/reference/rest/v3/projects/setIamPolicy
// documents: "Project does not support allUsers and allAuthenticatedUsers as
// members in a Binding of a Policy", and a user "must be invited using the
// Cloud Platform console and must accept the invitation" to be granted
// roles/owner (InviteOwner stands for that). Both answer INVALID_ARGUMENT
// "Request contains an invalid argument." as IAM does, with a
// google.rpc.BadRequest naming the member. Owners already in cur stay.
// st.mu must be held.
func (st *state) checkProjectRules(key string, cur *iampb.Policy, next []*iampb.Binding) error {
	if projectOf(key) == "" {
		return nil
	}
	owners := map[string]bool{}
	for _, b := range cur.GetBindings() {
		if b.GetRole() == "roles/owner" {
			for _, m := range b.GetMembers() {
				owners[m] = true
			}
		}
	}
	for _, b := range next {
		for _, m := range b.Members {
			if m == "allUsers" || m == "allAuthenticatedUsers" {
				return badRequest("policy.bindings.members",
					fmt.Sprintf("Project does not support allUsers and allAuthenticatedUsers as members in a Binding of a Policy (member %s, role %s).", m, b.Role))
			}
			if b.Role == "roles/owner" && strings.HasPrefix(m, "user:") && !owners[m] && !st.invited[key+" "+m] {
				return soloMustInviteOwners(m, b.Role,
					fmt.Sprintf("%s must be invited and accept the invitation to be granted roles/owner on %s (SOLO_MUST_INVITE_OWNERS).", m, key))
			}
		}
	}
	return nil
}

// AddRoles adds roles (custom roles such as projects/P/roles/ID or
// organizations/O/roles/ID, or predefined roles the fake does not list) to
// those SetKnownRolesOnly accepts. It panics on a malformed role name (one
// SetIamPolicy refuses, such as roles/Viewer), naming it.
func (s *Server) AddRoles(roles ...string) {
	for _, r := range roles {
		if err := validateRole(r); err != nil {
			panic("iamtest: AddRoles: " + status.Convert(err).Message())
		}
	}
	st := s.state
	st.mu.Lock()
	for _, r := range roles {
		st.roles[r] = true
	}
	st.mu.Unlock()
}

// checkKnownRoles refuses a role the fake does not know, as IAM refuses a
// role it does not support on a resource. st.mu must be held.
func (st *state) checkKnownRoles(bs []*iampb.Binding) error {
	for _, b := range bs {
		known := st.roles[b.Role] || st.liveCustomRoleLocked(b.Role) || slices.ContainsFunc(st.predefinedRolesLocked(), func(r *adminpb.Role) bool { return r.Name == b.Role })
		if !known {
			return status.Errorf(codes.InvalidArgument, "Role %s is not supported for this resource.", b.Role)
		}
	}
	return nil
}
