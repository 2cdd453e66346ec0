package iamtest

import (
	"context"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The resourcemanager services serve only Get/SetIamPolicy and
// TestIamPermissions, on the shared policy store, for resource names of their
// own kind ("projects/ID", "folders/ID", "organizations/ID"). Everything else
// answers UNIMPLEMENTED through the embedded Unimplemented*Server.

type projectsService struct {
	resourcemanagerpb.UnimplementedProjectsServer
	p *policyService
}

type foldersService struct {
	resourcemanagerpb.UnimplementedFoldersServer
	p *policyService
}

type organizationsService struct {
	resourcemanagerpb.UnimplementedOrganizationsServer
	p *policyService
}

// kindResolver accepts only names "KIND/ID" (one segment after the prefix).
func kindResolver(kind string) resolver {
	return func(_ *state, resource string) (string, error) {
		id, ok := strings.CutPrefix(resource, kind+"/")
		if !ok || id == "" || strings.Contains(id, "/") {
			return "", status.Errorf(codes.InvalidArgument,
				"invalid resource name %q: expected %s/ID", resource, kind)
		}
		return resource, nil
	}
}

var (
	projectsResolver      = kindResolver("projects")
	foldersResolver       = kindResolver("folders")
	organizationsResolver = kindResolver("organizations")
)

func (r *projectsService) GetIamPolicy(_ context.Context, req *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.getPolicy(req.GetResource(), req.GetOptions().GetRequestedPolicyVersion(), projectsResolver)
}

func (r *projectsService) SetIamPolicy(_ context.Context, req *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.setPolicy(req, projectsResolver)
}

func (r *projectsService) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	return r.p.s.testPermissions(req, projectsResolver)
}

func (r *foldersService) GetIamPolicy(_ context.Context, req *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.getPolicy(req.GetResource(), req.GetOptions().GetRequestedPolicyVersion(), foldersResolver)
}

func (r *foldersService) SetIamPolicy(_ context.Context, req *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.setPolicy(req, foldersResolver)
}

func (r *foldersService) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	return r.p.s.testPermissions(req, foldersResolver)
}

func (r *organizationsService) GetIamPolicy(_ context.Context, req *iampb.GetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.getPolicy(req.GetResource(), req.GetOptions().GetRequestedPolicyVersion(), organizationsResolver)
}

func (r *organizationsService) SetIamPolicy(_ context.Context, req *iampb.SetIamPolicyRequest) (*iampb.Policy, error) {
	return r.p.s.setPolicy(req, organizationsResolver)
}

func (r *organizationsService) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	return r.p.s.testPermissions(req, organizationsResolver)
}
