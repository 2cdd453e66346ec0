package iamtest

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Custom roles (google.iam.admin.v1.IAM CreateRole, GetRole, ListRoles,
// UpdateRole, DeleteRole, UndeleteRole), with the life cycle documented at
// https://cloud.google.com/iam/docs/creating-custom-roles#deleting-custom-role:
// "You can undelete a role within 7 days. After 7 days, the role enters a
// permanent deletion process that lasts 30 days. During this period, the
// role and all associated bindings are permanently removed, and you cannot
// create a new role with the same role ID." The fake purges at once when
// the 7 days are over (the role answers NOT_FOUND, is no longer listed and
// its bindings are removed from every policy), and keeps the ID taken for
// the 30 days after.

// Custom role life-cycle windows, on the fake's clock.
const (
	// RoleUndeleteWindow is how long a deleted custom role can be undeleted
	// (https://cloud.google.com/iam/docs/creating-custom-roles#deleting-custom-role:
	// "You can undelete a role within 7 days"). After it the role is purged:
	// GetRole answers NOT_FOUND, ListRoles omits it and its bindings leave
	// every policy.
	RoleUndeleteWindow = 7 * 24 * time.Hour
	// RolePurgeWindow is how long, after RoleUndeleteWindow, a purged role's
	// ID stays taken (CreateRole answers FAILED_PRECONDITION): "the role
	// enters a permanent deletion process that lasts 30 days".
	RolePurgeWindow = 30 * 24 * time.Hour
)

// customRole is a stored custom role and its deletion bookkeeping.
type customRole struct {
	role      *adminpb.Role
	deletedAt time.Time // zero while live
	purged    bool      // past RoleUndeleteWindow: gone but the ID is still taken
}

// customRoleParent splits a custom role name (or checks a parent) of the form
// projects/P/roles/ID or organizations/O/roles/ID.
func customRoleParent(name string) (parent, id string, ok bool) {
	parts := strings.Split(name, "/")
	if len(parts) != 4 || (parts[0] != "projects" && parts[0] != "organizations") || parts[1] == "" || parts[1] == "-" || parts[2] != "roles" || parts[3] == "" {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[3], true
}

// validRoleParent reports whether parent is projects/P or organizations/O.
func validRoleParent(parent string) bool {
	kind, id, _ := strings.Cut(parent, "/")
	return (kind == "projects" || kind == "organizations") && id != "" && id != "-" && !strings.Contains(id, "/")
}

// validCreateRoleID is the role_id rule of CreateRole: 3 to 64 letters,
// digits, underscores and periods
// (https://cloud.google.com/iam/docs/creating-custom-roles#naming_the_role:
// "The role ID ... can contain uppercase and lowercase alphanumeric
// characters, underscores, and periods. ... between 3 and 64 characters").
func validCreateRoleID(id string) bool {
	return len(id) >= 3 && customRoleID(id)
}

// Limits of custom roles (https://cloud.google.com/iam/quotas, "Custom
// roles": 300 per project and per organization, a description of up to 300
// bytes, 64 KB of title, description and permissions together; the comment
// of google.iam.admin.v1.Role.title: "Typically this is limited to 100 UTF-8
// bytes").
const (
	maxRoleTitle       = 100
	maxRoleDescription = 300
	maxRolePayload     = 64 << 10
	// MaxCustomRolesPerParent is the most custom roles a project or an
	// organization may hold; a deleted role counts until it is purged
	// (RoleUndeleteWindow). One more is refused FAILED_PRECONDITION.
	MaxCustomRolesPerParent = 300
)

// checkRoleFields validates what a create or update writes.
func checkRoleFields(r *adminpb.Role) error {
	if n := len(r.GetTitle()); n > maxRoleTitle {
		return status.Errorf(codes.InvalidArgument, "The title length (%d) is longer than the maximum allowed length %d.", n, maxRoleTitle)
	}
	if n := len(r.GetDescription()); n > maxRoleDescription {
		return status.Errorf(codes.InvalidArgument, "The description length (%d) is longer than the maximum allowed length %d.", n, maxRoleDescription)
	}
	size := len(r.GetTitle()) + len(r.GetDescription())
	for _, p := range r.GetIncludedPermissions() {
		if !validPermission(p) {
			return status.Errorf(codes.InvalidArgument, "Permission %s is not valid.", p)
		}
		size += len(p)
	}
	if size > maxRolePayload {
		return status.Errorf(codes.InvalidArgument,
			"The role's title, description and permissions take %d bytes, more than the maximum of %d (64 KB).", size, maxRolePayload)
	}
	return nil
}

// orgOnlyPermissions are permissions a project-level custom role cannot
// hold: https://cloud.google.com/iam/docs/roles-permissions-support lists
// resourcemanager.projects.list as not supported in project-level custom
// roles (it is effective only on an organization or folder).
var orgOnlyPermissions = map[string]bool{"resourcemanager.projects.list": true}

// checkRoleScope refuses, in a project's custom role (name
// projects/P/roles/ID), a permission only an organization's role may hold.
// IAM's words are undocumented: the message names the permission and why.
func checkRoleScope(name string, perms []string) error {
	if !strings.HasPrefix(name, "projects/") {
		return nil
	}
	for _, p := range perms {
		if orgOnlyPermissions[p] {
			return status.Errorf(codes.InvalidArgument,
				"Permission %s is not valid: it is not supported in project-level custom roles.", p)
		}
	}
	return nil
}

// validPermission reports whether p is SERVICE.RESOURCE.VERB without wildcards.
func validPermission(p string) bool {
	return p != "" && !strings.ContainsAny(p, "* /") && strings.Count(p, ".") >= 2 && !strings.Contains(p, "..")
}

// sweepRolesLocked purges the custom roles deleted more than
// RoleUndeleteWindow ago (removing their bindings from every policy, each
// such policy getting a new etag) and frees the IDs purged more than
// RolePurgeWindow ago. Every method that reads roles or policies runs it
// first. st.mu must be held.
func (st *state) sweepRolesLocked(now time.Time) {
	for name, cr := range st.customRoles {
		if cr.deletedAt.IsZero() {
			continue
		}
		if !cr.purged && !now.Before(cr.deletedAt.Add(RoleUndeleteWindow)) {
			cr.purged = true
			st.removeRoleBindingsLocked(name, now)
		}
		if cr.purged && !now.Before(cr.deletedAt.Add(RoleUndeleteWindow+RolePurgeWindow)) {
			delete(st.customRoles, name)
		}
	}
}

// removeRoleBindingsLocked removes every binding of role from every policy.
func (st *state) removeRoleBindingsLocked(role string, now time.Time) {
	for key, p := range st.policies {
		if !slices.ContainsFunc(p.GetBindings(), func(b *iampb.Binding) bool { return b.GetRole() == role }) {
			continue
		}
		next := proto.Clone(p).(*iampb.Policy)
		next.Bindings = slices.DeleteFunc(next.Bindings, func(b *iampb.Binding) bool { return b.GetRole() == role })
		next.Version = lowestVersion(next)
		next.Etag = st.nextEtagLocked()
		st.storeLocked(key, next, now)
	}
}

// checkCustomRoleGrantsLocked refuses to grant a custom role the fake holds
// as deleted (or purged) to a member cur does not already grant it to:
// "When a role is deleted, its bindings remain, but are inactive"
// (creating-custom-roles), and a deleted role cannot be granted anew (the
// message is the fake's). Custom roles the fake never saw are not checked
// (see SetKnownRolesOnly). st.mu must be held.
func (st *state) checkCustomRoleGrantsLocked(cur *iampb.Policy, next []*iampb.Binding) error {
	for _, b := range next {
		cr, ok := st.customRoles[b.GetRole()]
		if !ok || cr.deletedAt.IsZero() {
			continue
		}
		for _, m := range b.GetMembers() {
			had := !cr.purged && slices.ContainsFunc(cur.GetBindings(), func(c *iampb.Binding) bool {
				return c.GetRole() == b.GetRole() && slices.Contains(c.GetMembers(), m)
			})
			if !had {
				return status.Errorf(codes.InvalidArgument, "Role %s is deleted and cannot be granted (to %s).", b.GetRole(), m)
			}
		}
	}
	return nil
}

// liveCustomRoleLocked reports whether name is a custom role the fake holds
// and that is not deleted.
func (st *state) liveCustomRoleLocked(name string) bool {
	cr, ok := st.customRoles[name]
	return ok && cr.deletedAt.IsZero()
}

// roleNotFound is IAM's answer for a role that does not exist.
func roleNotFound(name string) error {
	return status.Errorf(codes.NotFound, "The role named %s was not found.", name)
}

// predefinedRoleRefusal answers a write to a predefined role: only custom
// roles can be changed (the comments of UpdateRoleRequest.name and
// DeleteRoleRequest.name: "This method updates only custom roles").
func predefinedRoleRefusal(name string) error {
	return status.Errorf(codes.InvalidArgument,
		"invalid role name %q: only custom roles (projects/PROJECT_ID/roles/ID, organizations/ORG_ID/roles/ID) can be changed", name)
}

// CreateRole creates a custom role in projects/P or organizations/O.
func (a *adminService) CreateRole(_ context.Context, req *adminpb.CreateRoleRequest) (*adminpb.Role, error) {
	parent := req.GetParent()
	if !validRoleParent(parent) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid parent %q: expected projects/PROJECT_ID or organizations/ORG_ID", parent)
	}
	id := req.GetRoleId()
	if !validCreateRoleID(id) {
		// IAM's words, as gcloud iam roles create shows them in
		// https://github.com/GoogleCloudPlatform/k8s-config-connector/issues/210.
		return nil, status.Errorf(codes.InvalidArgument,
			`The role_id %q is invalid. It doesn't match pattern "[a-zA-Z0-9_\.]{3,64}". `+
				"The role_id must be 3 to 64 characters long and can be a mix of uppercase and lowercase English letters, digits, underscores and periods.", id)
	}
	in := req.GetRole()
	if in.GetName() != "" { // IAM names the role from parent and role_id
		return nil, status.Error(codes.InvalidArgument, "Must not specify role.name.")
	}
	if err := checkRoleFields(in); err != nil {
		return nil, err
	}
	name := parent + "/roles/" + id
	if err := checkRoleScope(name, in.GetIncludedPermissions()); err != nil {
		return nil, err
	}
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweepRolesLocked(now)
	if cr, ok := st.customRoles[name]; ok {
		if cr.deletedAt.IsZero() {
			return nil, status.Errorf(codes.AlreadyExists, "A role named %s in %s already exists.", id, parent)
		}
		return nil, status.Errorf(codes.FailedPrecondition,
			"You can't create a role_id (%s) which has been marked for deletion.", id)
	}
	held := 0
	for other, cr := range st.customRoles {
		if p, _, _ := customRoleParent(other); p == parent && !cr.purged {
			held++
		}
	}
	if held >= MaxCustomRolesPerParent {
		// IAM's code and words for this are undocumented: the fake's choice,
		// a refusal that retrying cannot help.
		return nil, status.Errorf(codes.FailedPrecondition,
			"The maximum number of custom roles (%d) in %s has been reached.", MaxCustomRolesPerParent, parent)
	}
	r := &adminpb.Role{
		Name:                name,
		Title:               in.GetTitle(),
		Description:         in.GetDescription(),
		IncludedPermissions: slices.Clone(in.GetIncludedPermissions()),
		Stage:               in.GetStage(),
		Etag:                st.nextEtagLocked(),
	}
	st.customRoles[name] = &customRole{role: r}
	return proto.Clone(r).(*adminpb.Role), nil
}

// getCustomRoleLocked returns a visible (not purged) custom role.
func (st *state) getCustomRoleLocked(name string) (*customRole, error) {
	cr, ok := st.customRoles[name]
	if !ok || cr.purged {
		return nil, roleNotFound(name)
	}
	return cr, nil
}

// checkRoleName refuses a malformed role name (in GetRole, UpdateRole,
// DeleteRole, UndeleteRole) with IAM's words, INVALID_ARGUMENT: a role ID
// holding "-" (projects/P/roles/test-1) is refused so, as GetRole over REST
// answered in https://github.com/pulumi/pulumi-gcp/issues/70 and
// https://github.com/GoogleCloudPlatform/k8s-config-connector/issues/210
// ('Error 400: The role name must be in the form "roles/{role}",
// "organizations/{organization_id}/roles/{role}", or
// "projects/{project_id}/roles/{role}".').
func checkRoleName(name string) error {
	_, _, custom := customRoleParent(name)
	if validateRole(name) != nil || !custom && !strings.HasPrefix(name, "roles/") {
		return status.Error(codes.InvalidArgument,
			`The role name must be in the form "roles/{role}", "organizations/{organization_id}/roles/{role}", or "projects/{project_id}/roles/{role}".`)
	}
	return nil
}

// checkCustomRoleName refuses a malformed role name (checkRoleName) and a
// predefined role's.
func checkCustomRoleName(name string) error {
	if err := checkRoleName(name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "roles/") {
		return predefinedRoleRefusal(name)
	}
	return nil
}

// changeCustomRole changes the custom role name under the store's lock: a
// non-empty etag that is not the role's answers the stale-etag code
// (ABORTED unless SetStaleEtagCode); f changes next, a copy of the role
// (and cr's bookkeeping), or refuses; the change gets a new etag and is
// answered.
func (a *adminService) changeCustomRole(name string, etag []byte, f func(cr *customRole, next *adminpb.Role, now time.Time) error) (*adminpb.Role, error) {
	staleCode := a.s.staleEtagCode()
	return a.withCustomRole(name, func(st *state, cr *customRole, now time.Time) (*adminpb.Role, error) {
		if len(etag) > 0 && !bytes.Equal(etag, cr.role.Etag) {
			return nil, status.Error(staleCode, concurrentChangeMessage)
		}
		next := proto.Clone(cr.role).(*adminpb.Role)
		if err := f(cr, next, now); err != nil {
			return nil, err
		}
		next.Etag = st.nextEtagLocked()
		cr.role = next
		return proto.Clone(next).(*adminpb.Role), nil
	})
}

// bumpRoleEtag rewrites the custom role name unchanged with a new etag, as
// a concurrent writer would (ConcurrentWriteNext on MethodUpdateRole).
func (s *Server) bumpRoleEtag(name string) {
	_, _ = (&adminService{s: s}).changeCustomRole(name, nil, func(*customRole, *adminpb.Role, time.Time) error { return nil })
}

// withCustomRole runs f under the store's lock on the visible custom role
// name (after purging the roles deleted too long ago) and answers what f
// answers; a role that is not there answers NOT_FOUND without calling f.
func (a *adminService) withCustomRole(name string, f func(st *state, cr *customRole, now time.Time) (*adminpb.Role, error)) (*adminpb.Role, error) {
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweepRolesLocked(now)
	cr, err := st.getCustomRoleLocked(name)
	if err != nil {
		return nil, err
	}
	return f(st, cr, now)
}

// UpdateRole changes the fields of a custom role that update_mask names
// (title, description, included_permissions, stage; all of them when the
// mask is empty). A role.etag that is not the current one answers ABORTED,
// with concurrentChangeMessage (or the code of SetStaleEtagCode); an empty
// etag writes blind.
func (a *adminService) UpdateRole(_ context.Context, req *adminpb.UpdateRoleRequest) (*adminpb.Role, error) {
	name := req.GetName()
	if err := checkCustomRoleName(name); err != nil {
		return nil, err
	}
	in := req.GetRole()
	paths := req.GetUpdateMask().GetPaths()
	if len(paths) == 0 {
		paths = []string{"title", "description", "included_permissions", "stage"}
	}
	for i, p := range paths {
		p = snakeCase(p)
		paths[i] = p
		switch p {
		case "title", "description", "included_permissions", "stage":
		default:
			return nil, status.Errorf(codes.InvalidArgument,
				"invalid update_mask path %q: the paths may be title, description, included_permissions and stage", p)
		}
	}
	if err := checkRoleFields(in); err != nil {
		return nil, err
	}
	if err := checkRoleScope(name, in.GetIncludedPermissions()); err != nil {
		return nil, err
	}
	return a.changeCustomRole(name, in.GetEtag(), func(cr *customRole, next *adminpb.Role, _ time.Time) error {
		if !cr.deletedAt.IsZero() {
			return status.Errorf(codes.FailedPrecondition, "You can't update role_id (%s) as it is deleted.", name)
		}
		for _, p := range paths {
			switch p {
			case "title":
				next.Title = in.GetTitle()
			case "description":
				next.Description = in.GetDescription()
			case "included_permissions":
				next.IncludedPermissions = slices.Clone(in.GetIncludedPermissions())
			case "stage":
				next.Stage = in.GetStage()
			}
		}
		return nil
	})
}

// snakeCase turns a lowerCamelCase field path into its proto name.
func snakeCase(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DeleteRole soft-deletes a custom role: it answers the role with deleted
// true, stays gettable (and listed with show_deleted) until it is purged
// RoleUndeleteWindow later. A stale etag answers ABORTED; deleting again
// answers FAILED_PRECONDITION with IAM's message.
func (a *adminService) DeleteRole(_ context.Context, req *adminpb.DeleteRoleRequest) (*adminpb.Role, error) {
	name := req.GetName()
	if err := checkCustomRoleName(name); err != nil {
		return nil, err
	}
	return a.changeCustomRole(name, req.GetEtag(), func(cr *customRole, next *adminpb.Role, now time.Time) error {
		if !cr.deletedAt.IsZero() {
			return status.Errorf(codes.FailedPrecondition, "You can't delete role_id (%s) as it is already deleted.", name)
		}
		next.Deleted = true
		cr.deletedAt = now
		return nil
	})
}

// UndeleteRole restores a custom role deleted less than RoleUndeleteWindow
// ago; undeleting a live role answers FAILED_PRECONDITION.
func (a *adminService) UndeleteRole(_ context.Context, req *adminpb.UndeleteRoleRequest) (*adminpb.Role, error) {
	name := req.GetName()
	if err := checkCustomRoleName(name); err != nil {
		return nil, err
	}
	return a.changeCustomRole(name, req.GetEtag(), func(cr *customRole, next *adminpb.Role, _ time.Time) error {
		if cr.deletedAt.IsZero() {
			return status.Errorf(codes.FailedPrecondition, "You can't undelete role_id (%s) as it is not deleted.", name)
		}
		next.Deleted = false
		cr.deletedAt = time.Time{}
		return nil
	})
}

// getRole answers GetRole: a predefined role (predefinedRole), or a custom
// one (deleted ones included, until purged), always with its permissions.
func (a *adminService) getRole(name string) (*adminpb.Role, error) {
	if err := checkRoleName(name); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "roles/") {
		return a.predefinedRole(name)
	}
	return a.withCustomRole(name, func(_ *state, cr *customRole, _ time.Time) (*adminpb.Role, error) {
		return proto.Clone(cr.role).(*adminpb.Role), nil
	})
}

// customRolesLocked returns the visible custom roles under parent, sorted by
// name, deleted ones only when showDeleted.
func (st *state) customRolesLocked(parent string, showDeleted bool) []*adminpb.Role {
	var out []*adminpb.Role
	for name, cr := range st.customRoles {
		if cr.purged || (!showDeleted && !cr.deletedAt.IsZero()) || !strings.HasPrefix(name, parent+"/roles/") {
			continue
		}
		out = append(out, cr.role)
	}
	slices.SortFunc(out, func(x, y *adminpb.Role) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// CustomRole returns a copy of the custom role name (projects/P/roles/ID or
// organizations/O/roles/ID) as the fake stores it, deleted ones included
// until they are purged, or nil. It is no call: nothing is logged and no
// fault applies.
func (s *Server) CustomRole(name string) *adminpb.Role {
	now := s.now()
	st := s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.sweepRolesLocked(now)
	cr, ok := st.customRoles[name]
	if !ok || cr.purged {
		return nil
	}
	return proto.Clone(cr.role).(*adminpb.Role)
}
