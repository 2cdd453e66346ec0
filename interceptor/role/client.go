package role

import (
	"context"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
)

// Client reads and writes custom roles. The IAM admin client
// (cloud.google.com/go/iam/admin/apiv1's *IamClient, from admin.NewIamClient
// or interceptor.NewClient) meets it as it is; the iamv1 package adapts the
// REST discovery client (google.golang.org/api/iam/v1).
//
// The Updater passes gax.WithRetry(nil) on each call, so that a GAPIC
// client's own retries stay off and only the Updater retries; an
// implementation that retries on its own otherwise breaks that promise.
type Client interface {
	GetRole(ctx context.Context, req *adminpb.GetRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error)
	UpdateRole(ctx context.Context, req *adminpb.UpdateRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error)
}
