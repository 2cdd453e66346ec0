package policy

import (
	"context"
	"net/url"

	"cloud.google.com/go/iam"
	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client reads and writes IAM policies. It is met as it is by iam/apiv1's
// IamPolicyClient, resourcemanager's Projects, Folders and Organizations
// clients and every other GAPIC client with the IAM mixin; FromConn and
// FromAdmin adapt a raw connection and the admin client.
//
// The Updater passes gax.WithRetry(nil) on each call, so that a GAPIC
// client's own retries stay off and only the Updater retries; an
// implementation that retries on its own otherwise (a discovery client
// whose http.Client retries) breaks that promise.
type Client interface {
	GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error)
	SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error)
}

// FromConn returns a Client that calls google.iam.v1.IAMPolicy on conn
// through the generated stub (iampb.NewIAMPolicyClient), with the routing
// header (x-goog-request-params) that GAPIC clients send. Its CallOptions are
// honoured as a GAPIC client honours them, through gax.Invoke:
// gax.WithGRPCOptions passes gRPC options to the call (interceptor.Disable(),
// say), gax.WithTimeout bounds the call and gax.WithRetry retries it. A nil
// conn gives a nil Client, which NewUpdater refuses.
func FromConn(conn grpc.ClientConnInterface) Client {
	if conn == nil {
		return nil
	}
	return connClient{stub: iampb.NewIAMPolicyClient(conn)}
}

type connClient struct{ stub iampb.IAMPolicyClient }

func routed(ctx context.Context, resource string) context.Context {
	return gax.InsertMetadataIntoOutgoingContext(ctx, "x-goog-request-params", "resource="+url.QueryEscape(resource))
}

func (c connClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	var resp *iampb.Policy
	err := gax.Invoke(routed(ctx, req.GetResource()), func(ctx context.Context, s gax.CallSettings) error {
		var err error
		resp, err = c.stub.GetIamPolicy(ctx, req, s.GRPC...)
		return err
	}, opts...)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (c connClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	var resp *iampb.Policy
	err := gax.Invoke(routed(ctx, req.GetResource()), func(ctx context.Context, s gax.CallSettings) error {
		var err error
		resp, err = c.stub.SetIamPolicy(ctx, req, s.GRPC...)
		return err
	}, opts...)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// FromAdmin returns a Client over the IAM admin client, whose GetIamPolicy
// and SetIamPolicy (policies of service accounts) are hand-written with the
// iam.Policy type. The request's RequestedPolicyVersion, the policy's
// version and etag pass through unchanged.
//
// What the admin methods cannot carry is refused or dropped, never silently
// changed: they take no CallOptions, so opts are dropped (configure the admin
// client's CallOptions instead); they send no update_mask, which IAM reads as
// "bindings,etag", so a request whose mask names anything else (audit
// configs) fails INVALID_ARGUMENT before it is sent. A nil c gives a nil
// Client, which NewUpdater refuses.
func FromAdmin(c *admin.IamClient) Client {
	if c == nil {
		return nil
	}
	return adminClient{c: c}
}

type adminClient struct{ c *admin.IamClient }

func (a adminClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	p, err := a.c.GetIamPolicy(ctx, req)
	if err != nil {
		return nil, err
	}
	return p.InternalProto, nil
}

func (a adminClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, _ ...gax.CallOption) (*iampb.Policy, error) {
	if req.GetPolicy() == nil {
		return nil, status.Error(grpccodes.InvalidArgument, "iamretry/policy: SetIamPolicy without a policy")
	}
	for _, path := range req.GetUpdateMask().GetPaths() {
		switch path {
		case "bindings", "etag", "version":
		default:
			return nil, status.Errorf(grpccodes.InvalidArgument,
				"iamretry/policy: the admin client sends no update_mask (IAM then writes bindings and etag only); it cannot write %q", path)
		}
	}
	p, err := a.c.SetIamPolicy(ctx, &admin.SetIamPolicyRequest{
		Resource: req.GetResource(),
		Policy:   &iam.Policy{InternalProto: req.GetPolicy()},
	})
	if err != nil {
		return nil, err
	}
	return p.InternalProto, nil
}
