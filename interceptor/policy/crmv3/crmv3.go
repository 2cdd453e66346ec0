// Package crmv3 adapts the Resource Manager v3 discovery client
// (google.golang.org/api/cloudresourcemanager/v3) to policy.Client, so that
// a policy.Updater changes the policies of projects, folders and
// organizations through it. It is its own package so that the policy
// package does not import every discovery client.
//
// The discovery client has no retries of its own: give its *http.Client a
// Retrier's RoundTripper for the calls made outside an Updater (the Updater
// owns the retries of its own calls; the RoundTripper passes them through).
// GAPIC REST clients (resourcemanager.NewProjectsRESTClient, ...) need no
// adapter: they meet policy.Client as they are.
package crmv3

import (
	"context"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	crm "google.golang.org/api/cloudresourcemanager/v3"

	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/internal/jsonpolicy"
)

// Projects returns s.Projects as a policy.Client; resources are named
// "projects/PROJECT_ID" (or number).
func Projects(s *crm.Service) policy.Client {
	return client{
		get: func(ctx context.Context, r string, q *crm.GetIamPolicyRequest) (*crm.Policy, error) {
			return s.Projects.GetIamPolicy(r, q).Context(ctx).Do()
		},
		set: func(ctx context.Context, r string, q *crm.SetIamPolicyRequest) (*crm.Policy, error) {
			return s.Projects.SetIamPolicy(r, q).Context(ctx).Do()
		},
	}
}

// Folders returns s.Folders as a policy.Client; resources are named
// "folders/FOLDER_ID".
func Folders(s *crm.Service) policy.Client {
	return client{
		get: func(ctx context.Context, r string, q *crm.GetIamPolicyRequest) (*crm.Policy, error) {
			return s.Folders.GetIamPolicy(r, q).Context(ctx).Do()
		},
		set: func(ctx context.Context, r string, q *crm.SetIamPolicyRequest) (*crm.Policy, error) {
			return s.Folders.SetIamPolicy(r, q).Context(ctx).Do()
		},
	}
}

// Organizations returns s.Organizations as a policy.Client; resources are
// named "organizations/ORG_ID".
func Organizations(s *crm.Service) policy.Client {
	return client{
		get: func(ctx context.Context, r string, q *crm.GetIamPolicyRequest) (*crm.Policy, error) {
			return s.Organizations.GetIamPolicy(r, q).Context(ctx).Do()
		},
		set: func(ctx context.Context, r string, q *crm.SetIamPolicyRequest) (*crm.Policy, error) {
			return s.Organizations.SetIamPolicy(r, q).Context(ctx).Do()
		},
	}
}

type client struct {
	get func(context.Context, string, *crm.GetIamPolicyRequest) (*crm.Policy, error)
	set func(context.Context, string, *crm.SetIamPolicyRequest) (*crm.Policy, error)
}

// GetIamPolicy reads the policy with the requested version; gax options do
// not apply to a discovery client and are ignored (the Updater passes
// gax.WithRetry(nil), which a discovery client needs not: it never retries).
func (c client) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	q := &crm.GetIamPolicyRequest{}
	if v := req.GetOptions().GetRequestedPolicyVersion(); v != 0 {
		q.Options = &crm.GetPolicyOptions{RequestedPolicyVersion: int64(v)}
	}
	p, err := c.get(ctx, req.GetResource(), q)
	if err != nil {
		return nil, err
	}
	return jsonpolicy.ToProto(p)
}

// SetIamPolicy writes the policy with its etag and update mask.
func (c client) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	q := &crm.SetIamPolicyRequest{Policy: new(crm.Policy)}
	mask, err := jsonpolicy.SetRequest(req, q.Policy)
	if err != nil {
		return nil, err
	}
	q.UpdateMask = mask
	p, err := c.set(ctx, req.GetResource(), q)
	if err != nil {
		return nil, err
	}
	return jsonpolicy.ToProto(p)
}
