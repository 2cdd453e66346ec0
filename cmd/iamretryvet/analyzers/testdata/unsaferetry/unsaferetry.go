// Package unsaferetry holds Creates of the admin client inside Retrier.Do
// (reported) and outside it (not reported).
package unsaferetry

import (
	"context"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/interceptor"
)

func mintInDo(ctx context.Context, r *interceptor.Retrier, c *admin.IamClient) error { // want mintInDo:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "key", func(ctx context.Context) error {
		_, err := c.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/p/serviceAccounts/a"}) // want `Retrier.Do replays CreateServiceAccountKey after an ambiguous failure`
		return err
	})
}

func createRoleInDo(ctx context.Context, r *interceptor.Retrier, c *admin.IamClient) error { // want createRoleInDo:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "role", func(ctx context.Context) error {
		_, err := c.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "r"}) // want `replays CreateRole`
		return err
	})
}

// Not reported: a read in Do, a Create outside it.
func safe(ctx context.Context, r *interceptor.Retrier, c *admin.IamClient) error { // want safe:`callsOwner\(interceptor.Retrier.Do\)`
	if _, err := c.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: "projects/p/serviceAccounts/a"}); err != nil {
		return err
	}
	return r.Do(ctx, "get", func(ctx context.Context) error {
		_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
		return err
	})
}

// Not reported: silenced.
func ignored(ctx context.Context, r *interceptor.Retrier, c *admin.IamClient) error { // want ignored:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "sa", func(ctx context.Context) error {
		_, err := c.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "a"}) //iamretryvet:ignore unsaferetry ALREADY_EXISTS is handled by the caller
		return err
	})
}
