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
// (as the generated stub iampb.NewIAMPolicyClient does), with the routing
// header (x-goog-request-params) that GAPIC clients send. Its CallOptions are
// honoured as a GAPIC client honours them, through gax.Invoke:
// gax.WithGRPCOptions passes gRPC options to the call (interceptor.Disable(),
// say), gax.WithTimeout bounds the call and gax.WithRetry retries it. A nil
// conn gives a nil Client, which NewUpdater refuses.
func FromConn(conn grpc.ClientConnInterface) Client {
	return FromService(conn, "google.iam.v1.IAMPolicy")
}

// FromService returns a Client that calls the GetIamPolicy and SetIamPolicy
// methods of the gRPC service named service on conn, as FromConn does those
// of google.iam.v1.IAMPolicy: with the routing header, CallOptions through
// gax.Invoke. It serves the APIs that hold IAM policies on a service of
// their own, with the google.iam.v1 messages, when a program has a
// connection rather than their GAPIC client: "google.iam.admin.v1.IAM",
// "google.cloud.resourcemanager.v3.Projects", "google.cloud.run.v2.Services",
// ... A service the server does not serve fails each call with its
// UNIMPLEMENTED. A nil conn gives a nil Client, which NewUpdater refuses.
func FromService(conn grpc.ClientConnInterface, service string) Client {
	if conn == nil {
		return nil
	}
	return connClient{conn: conn, get: "/" + service + "/GetIamPolicy", set: "/" + service + "/SetIamPolicy"}
}

// connClient calls the IAM methods get and set (full gRPC method names) on
// conn.
type connClient struct {
	conn     grpc.ClientConnInterface
	get, set string
}

func routed(ctx context.Context, resource string) context.Context {
	return gax.InsertMetadataIntoOutgoingContext(ctx, "x-goog-request-params", "resource="+url.QueryEscape(resource))
}

func (c connClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	return c.invoke(ctx, c.get, req.GetResource(), req, opts)
}

func (c connClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	return c.invoke(ctx, c.set, req.GetResource(), req, opts)
}

// invoke calls method with req through gax.Invoke, routed by resource.
func (c connClient) invoke(ctx context.Context, method, resource string, req any, opts []gax.CallOption) (*iampb.Policy, error) {
	var resp *iampb.Policy
	err := gax.Invoke(routed(ctx, resource), func(ctx context.Context, s gax.CallSettings) error {
		p := new(iampb.Policy) // a fresh one an attempt, as the generated stub does
		if err := c.conn.Invoke(ctx, method, req, p, s.GRPC...); err != nil {
			return err
		}
		resp = p
		return nil
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
