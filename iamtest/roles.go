package iamtest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// predefinedRoles are the roles every server lists (ListRoles,
// QueryGrantableRoles) and answers with permissions, sorted by name. Their
// permissions are a small, representative excerpt of the real ones.
var predefinedRoles = []*adminpb.Role{
	{
		Name:        "roles/editor",
		Title:       "Editor",
		Description: "View, create, update, and delete most Google Cloud resources.",
		IncludedPermissions: []string{
			"iam.serviceAccounts.create", "iam.serviceAccounts.delete", "iam.serviceAccounts.get",
			"iam.serviceAccounts.list", "resourcemanager.projects.get",
		},
	},
	{
		Name:        "roles/iam.serviceAccountTokenCreator",
		Title:       "Service Account Token Creator",
		Description: "Impersonate service accounts (create OAuth2 access tokens, sign blobs or JWTs, etc).",
		IncludedPermissions: []string{
			"iam.serviceAccounts.get", "iam.serviceAccounts.getAccessToken", "iam.serviceAccounts.getOpenIdToken",
			"iam.serviceAccounts.implicitDelegation", "iam.serviceAccounts.signBlob", "iam.serviceAccounts.signJwt",
		},
	},
	{
		Name:        "roles/iam.serviceAccountUser",
		Title:       "Service Account User",
		Description: "Run operations as the service account.",
		IncludedPermissions: []string{
			"iam.serviceAccounts.actAs", "iam.serviceAccounts.get", "iam.serviceAccounts.list",
		},
	},
	{
		Name:        "roles/owner",
		Title:       "Owner",
		Description: "Full access to most Google Cloud resources.",
		IncludedPermissions: []string{
			"iam.serviceAccounts.create", "iam.serviceAccounts.delete", "iam.serviceAccounts.get",
			"iam.serviceAccounts.getIamPolicy", "iam.serviceAccounts.list", "iam.serviceAccounts.setIamPolicy",
			"resourcemanager.projects.get", "resourcemanager.projects.getIamPolicy", "resourcemanager.projects.setIamPolicy",
		},
	},
	{
		Name:        "roles/viewer",
		Title:       "Viewer",
		Description: "View most Google Cloud resources.",
		IncludedPermissions: []string{
			"iam.serviceAccounts.get", "iam.serviceAccounts.list", "resourcemanager.projects.get",
		},
	},
}

func init() {
	for _, r := range predefinedRoles {
		r.Stage = adminpb.Role_GA
		r.Etag = predefinedEtag
	}
}

// roleView returns a copy of r in view: BASIC (the default) omits the
// permissions, as IAM does.
func roleView(r *adminpb.Role, view adminpb.RoleView) *adminpb.Role {
	c := proto.Clone(r).(*adminpb.Role)
	if view != adminpb.RoleView_FULL {
		c.IncludedPermissions = nil
	}
	return c
}

// predefinedEtag is the etag of every predefined role: they never change.
var predefinedEtag = []byte{0x00, 0x20, 0x01}

// SetPredefinedRole gives the predefined role name (roles/NAME) a title and
// permissions: GetRole answers them (as IAM answers a role it holds),
// ListRoles and QueryGrantableRoles list the role, QueryTestablePermissions
// counts its permissions, and SetKnownRolesOnly knows it. It replaces what
// the fake held for name, the five built-in roles (roles/owner, roles/editor,
// roles/viewer, roles/iam.serviceAccountUser,
// roles/iam.serviceAccountTokenCreator) included. Without it, GetRole answers
// any other well-formed roles/NAME with no title and no permissions. It panics
// on a name that is not a well-formed predefined role, naming it.
func (s *Server) SetPredefinedRole(name, title string, permissions ...string) {
	id, ok := strings.CutPrefix(name, "roles/")
	if !ok || validateRole(name) != nil || strings.Contains(id, "/") {
		panic(fmt.Sprintf("iamtest: SetPredefinedRole: %q is not a predefined role (roles/NAME)", name))
	}
	st := s.state
	st.mu.Lock()
	st.rolePerms[name] = &adminpb.Role{
		Name: name, Title: title, IncludedPermissions: slices.Clone(permissions),
		Stage: adminpb.Role_GA, Etag: predefinedEtag,
	}
	st.mu.Unlock()
}

// predefinedRolesLocked returns the built-in roles with those
// SetPredefinedRole gave, sorted by name; the roles are shared, not copied.
// st.mu must be held.
func (st *state) predefinedRolesLocked() []*adminpb.Role {
	out := make([]*adminpb.Role, 0, len(predefinedRoles)+len(st.rolePerms))
	for _, r := range predefinedRoles {
		if _, ok := st.rolePerms[r.Name]; !ok {
			out = append(out, r)
		}
	}
	for _, r := range st.rolePerms {
		out = append(out, r)
	}
	slices.SortFunc(out, func(x, y *adminpb.Role) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// predefinedRole answers GetRole for roles/NAME (well-formed): the role the
// fake holds, with its permissions; any other with no title and no
// permissions, as IAM holds roles the fake does not know; NOT_FOUND for one
// the fake does not know under SetKnownRolesOnly (AddRoles makes it known).
func (a *adminService) predefinedRole(name string) (*adminpb.Role, error) {
	knownOnly := a.s.fid().knownRolesOnly
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, r := range st.predefinedRolesLocked() {
		if r.Name == name {
			return proto.Clone(r).(*adminpb.Role), nil
		}
	}
	if knownOnly && !st.roles[name] {
		return nil, roleNotFound(name)
	}
	return &adminpb.Role{Name: name, Stage: adminpb.Role_GA, Etag: predefinedEtag}, nil
}

// GetRole answers a predefined role (any well-formed roles/NAME unless
// SetKnownRolesOnly; see predefinedRole), or a custom role (a deleted one
// with deleted true, until it is purged), with its permissions.
func (a *adminService) GetRole(_ context.Context, req *adminpb.GetRoleRequest) (*adminpb.Role, error) {
	return a.getRole(req.GetName())
}

// ListRoles lists the predefined roles (empty parent, or "roles") or the
// custom roles of projects/P or organizations/O (deleted ones with
// show_deleted), in view (BASIC, the default, omits the permissions), paged.
func (a *adminService) ListRoles(_ context.Context, req *adminpb.ListRolesRequest) (*adminpb.ListRolesResponse, error) {
	st := a.s.state
	st.mu.Lock()
	roles := st.predefinedRolesLocked()
	st.mu.Unlock()
	if parent := req.GetParent(); parent != "" && parent != "roles" {
		if !validRoleParent(parent) {
			return nil, status.Errorf(codes.InvalidArgument,
				"invalid parent %q: expected empty, projects/PROJECT_ID or organizations/ORG_ID", parent)
		}
		now := a.s.now()
		st.mu.Lock()
		st.sweepRolesLocked(now)
		roles = st.customRolesLocked(parent, req.GetShowDeleted())
		for i, r := range roles {
			roles[i] = proto.Clone(r).(*adminpb.Role)
		}
		st.mu.Unlock()
	}
	from, to, next, err := rolePages.page(len(roles), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.ListRolesResponse{NextPageToken: next}
	for _, r := range roles[from:to] {
		resp.Roles = append(resp.Roles, roleView(r, req.GetView()))
	}
	return resp, nil
}

// fullResourceParent maps a full resource name
// (//cloudresourcemanager.googleapis.com/projects/P,
// //iam.googleapis.com/projects/P/serviceAccounts/A,
// //cloudresourcemanager.googleapis.com/organizations/O, ...) to the parent
// whose custom roles apply there ("" for none), or fails INVALID_ARGUMENT.
func fullResourceParent(full string) (string, error) {
	rest, ok := strings.CutPrefix(full, "//")
	host, path, _ := strings.Cut(rest, "/")
	if !ok || !strings.HasSuffix(host, ".googleapis.com") || path == "" {
		return "", status.Errorf(codes.InvalidArgument,
			"invalid full_resource_name %q: expected //SERVICE.googleapis.com/RESOURCE, such as //cloudresourcemanager.googleapis.com/projects/PROJECT_ID", full)
	}
	parts := strings.Split(path, "/")
	if len(parts) >= 2 && (parts[0] == "projects" || parts[0] == "organizations") && parts[1] != "" {
		return parts[0] + "/" + parts[1], nil
	}
	return "", nil
}

// QueryGrantableRoles answers the roles grantable on a full resource name:
// the predefined roles and the live custom roles of the project or
// organization the name is in, sorted by name, in view, paged.
func (a *adminService) QueryGrantableRoles(_ context.Context, req *adminpb.QueryGrantableRolesRequest) (*adminpb.QueryGrantableRolesResponse, error) {
	parent, err := fullResourceParent(req.GetFullResourceName())
	if err != nil {
		return nil, err
	}
	now := a.s.now()
	st := a.s.state
	st.mu.Lock()
	roles := st.predefinedRolesLocked()
	if parent != "" {
		st.sweepRolesLocked(now)
		for _, r := range st.customRolesLocked(parent, false) {
			roles = append(roles, proto.Clone(r).(*adminpb.Role))
		}
	}
	st.mu.Unlock()
	from, to, next, err := rolePages.page(len(roles), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.QueryGrantableRolesResponse{NextPageToken: next}
	for _, r := range roles[from:to] {
		resp.Roles = append(resp.Roles, roleView(r, req.GetView()))
	}
	return resp, nil
}

// accountPermissions are the permissions testable on a service account,
// sorted: those IAM checks on the account itself
// (https://cloud.google.com/iam/docs/roles-permissions/iam lists the
// iam.serviceAccounts.* permissions; create and list are checked on the
// project, so they are not among them).
var accountPermissions = []string{
	"iam.serviceAccounts.actAs", "iam.serviceAccounts.delete", "iam.serviceAccounts.disable",
	"iam.serviceAccounts.enable", "iam.serviceAccounts.get", "iam.serviceAccounts.getAccessToken",
	"iam.serviceAccounts.getIamPolicy", "iam.serviceAccounts.getOpenIdToken",
	"iam.serviceAccounts.implicitDelegation", "iam.serviceAccounts.setIamPolicy",
	"iam.serviceAccounts.signBlob", "iam.serviceAccounts.signJwt", "iam.serviceAccounts.undelete",
	"iam.serviceAccounts.update",
}

// isAccountFullName reports whether full names a service account
// (//iam.googleapis.com/projects/P/serviceAccounts/A).
func isAccountFullName(full string) bool {
	rest, ok := strings.CutPrefix(full, "//iam.googleapis.com/projects/")
	_, acc, found := strings.Cut(rest, "/serviceAccounts/")
	return ok && found && acc != "" && !strings.Contains(acc, "/")
}

// QueryTestablePermissions answers the permissions testable on a full
// resource name, GA and supported in custom roles, sorted, paged: on a
// service account the account's (accountPermissions), elsewhere those of
// the fake's predefined roles.
func (a *adminService) QueryTestablePermissions(_ context.Context, req *adminpb.QueryTestablePermissionsRequest) (*adminpb.QueryTestablePermissionsResponse, error) {
	full := req.GetFullResourceName()
	if _, err := fullResourceParent(full); err != nil {
		return nil, err
	}
	var names []string
	if isAccountFullName(full) {
		names = accountPermissions
	} else {
		st := a.s.state
		st.mu.Lock()
		held := st.predefinedRolesLocked()
		st.mu.Unlock()
		for _, r := range held {
			for _, p := range r.IncludedPermissions {
				if !slices.Contains(names, p) {
					names = append(names, p)
				}
			}
		}
		slices.Sort(names)
	}
	from, to, next, err := permissionPages.page(len(names), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.QueryTestablePermissionsResponse{NextPageToken: next}
	for _, n := range names[from:to] {
		resp.Permissions = append(resp.Permissions, &adminpb.Permission{
			Name: n, Title: n, Stage: adminpb.Permission_GA,
			CustomRolesSupportLevel: adminpb.Permission_SUPPORTED,
		})
	}
	return resp, nil
}
