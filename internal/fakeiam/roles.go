package fakeiam

import (
	"context"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// predefinedRoles are the roles GetRole and ListRoles know, sorted by name.
// Their permissions are a small, representative excerpt of the real ones.
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
		r.Etag = []byte{0x00, 0x20, 0x01} // predefined roles never change
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

// GetRole answers a predefined role with its permissions.
func (a *adminService) GetRole(_ context.Context, req *adminpb.GetRoleRequest) (*adminpb.Role, error) {
	if err := validateRole(req.GetName()); err != nil {
		return nil, err
	}
	for _, r := range predefinedRoles {
		if r.Name == req.GetName() {
			return roleView(r, adminpb.RoleView_FULL), nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "The role named %s was not found.", req.GetName())
}

// ListRoles lists the predefined roles (empty parent) paged; a project or
// organization has no custom roles in the fake.
func (a *adminService) ListRoles(_ context.Context, req *adminpb.ListRolesRequest) (*adminpb.ListRolesResponse, error) {
	roles := predefinedRoles
	if parent := req.GetParent(); parent != "" && parent != "roles" {
		kind, id, _ := strings.Cut(parent, "/")
		if (kind != "projects" && kind != "organizations") || id == "" || strings.Contains(id, "/") {
			return nil, status.Errorf(codes.InvalidArgument,
				"invalid parent %q: expected empty, projects/PROJECT_ID or organizations/ORG_ID", parent)
		}
		roles = nil
	}
	from, to, next, err := page(len(roles), req.GetPageSize(), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	resp := &adminpb.ListRolesResponse{NextPageToken: next}
	for _, r := range roles[from:to] {
		resp.Roles = append(resp.Roles, roleView(r, req.GetView()))
	}
	return resp, nil
}
