// Package iamv1 adapts the IAM v1 discovery client
// (google.golang.org/api/iam/v1) to policy.Client, so that a policy.Updater
// changes the policies of service accounts through it. It is its own
// package so that the policy package does not import every discovery
// client.
//
// The discovery client has no retries of its own: give its *http.Client a
// Retrier's RoundTripper for the calls made outside an Updater (the Updater
// owns the retries of its own calls; the RoundTripper passes them through).
// GAPIC REST clients (iam/apiv1's NewIamPolicyRESTClient) need no adapter:
// they meet policy.Client as they are.
package iamv1

import (
	"context"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	iam "google.golang.org/api/iam/v1"

	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/internal/jsonpolicy"
)

// ServiceAccounts returns s.Projects.ServiceAccounts as a policy.Client;
// resources are named "projects/PROJECT/serviceAccounts/EMAIL_OR_ID".
func ServiceAccounts(s *iam.Service) policy.Client { return client{s: s} }

type client struct{ s *iam.Service }

// GetIamPolicy reads the policy with the requested version; gax options do
// not apply to a discovery client and are ignored (the Updater passes
// gax.WithRetry(nil), which a discovery client needs not: it never retries).
func (c client) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	call := c.s.Projects.ServiceAccounts.GetIamPolicy(req.GetResource()).Context(ctx)
	if v := req.GetOptions().GetRequestedPolicyVersion(); v != 0 {
		call = call.OptionsRequestedPolicyVersion(int64(v))
	}
	p, err := call.Do()
	if err != nil {
		return nil, err
	}
	return jsonpolicy.ToProto(p)
}

// SetIamPolicy writes the policy with its etag and update mask.
func (c client) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	q := &iam.SetIamPolicyRequest{Policy: new(iam.Policy)}
	mask, err := jsonpolicy.SetRequest(req, q.Policy)
	if err != nil {
		return nil, err
	}
	q.UpdateMask = mask
	p, err := c.s.Projects.ServiceAccounts.SetIamPolicy(req.GetResource(), q).Context(ctx).Do()
	if err != nil {
		return nil, err
	}
	return jsonpolicy.ToProto(p)
}
