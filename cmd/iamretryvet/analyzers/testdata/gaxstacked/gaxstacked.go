// Package gaxstacked holds gRPC clients given the Retrier's interceptor:
// reported when their gax retries stay on.
package gaxstacked

import (
	"context"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/interceptor"
)

func stacked(ctx context.Context, r *interceptor.Retrier) error {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor()))) // want `admin.NewIamClient's gax retries stay on above the Retrier's interceptor, .*interceptor.DisableGAXRetries\(c.CallOptions\)`
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
	return err
}

func stackedThroughOptions(ctx context.Context) error {
	opts := []option.ClientOption{option.WithGRPCDialOption(grpc.WithUnaryInterceptor(interceptor.UnaryClientInterceptor()))}
	c, err := iamapi.NewIamPolicyClient(ctx, opts...) // want `iam.NewIamPolicyClient's gax retries stay on`
	if err != nil {
		return err
	}
	_, err = c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	return err
}

// Not reported: gax retries turned off.
func disabled(ctx context.Context, r *interceptor.Retrier) error {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
	if err != nil {
		return err
	}
	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
		return err
	}
	_, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
	return err
}

// Not reported: the client escapes (returned); its caller may turn them off.
func returned(ctx context.Context, r *interceptor.Retrier) (*admin.IamClient, error) {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
	return c, err
}

type holder struct{ c *admin.IamClient }

// Not reported: the client escapes (stored).
func stored(ctx context.Context, r *interceptor.Retrier, h *holder) error {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
	h.c = c
	return err
}

// Not reported: silenced.
func ignored(ctx context.Context, r *interceptor.Retrier) error {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor()))) //iamretryvet:ignore gaxstacked measuring the stacked report
	if err != nil {
		return err
	}
	return c.Close()
}
