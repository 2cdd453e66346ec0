// Package nestedowner holds retry owners nested in owners (reported),
// directly and through functions of this package, and owners in sequence
// (not reported).
package nestedowner

import (
	"context"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"

	"example.com/vetcorpus/nestedowner/steps"
)

func nestedDo(ctx context.Context, r *interceptor.Retrier) error { // want nestedDo:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "outer", func(ctx context.Context) error {
		return r.Do(ctx, "inner", func(ctx context.Context) error { return nil }) // want `interceptor.Retrier.Do inside the function given to interceptor.Retrier.Do: .*one owner per call`
	})
}

func updateInDo(ctx context.Context, r *interceptor.Retrier, u *policy.Updater) error { // want updateInDo:`callsOwner`
	return r.Do(ctx, "grant", func(ctx context.Context) error {
		_, err := u.Update(ctx, "projects/p", policy.AddBinding("roles/viewer", "user:a@example.com")) // want `policy.Updater.Update inside the function given to interceptor.Retrier.Do`
		return err
	})
}

func waitInTransact(ctx context.Context, r *interceptor.Retrier, c *admin.IamClient) error { // want waitInTransact:`callsOwner\(interceptor.Transact\)`
	_, err := interceptor.Transact(ctx, r, interceptor.ReadModifyWrite[*adminpb.Role]{
		Method: "example/role",
		Read: func(ctx context.Context) (*adminpb.Role, error) {
			return interceptor.WaitVisible(ctx, r, "role", func(ctx context.Context) (*adminpb.Role, error) { // want `interceptor.WaitVisible inside the function given to interceptor.Transact`
				return c.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/p/roles/r"})
			})
		},
		Modify: func(v *adminpb.Role) (*adminpb.Role, bool, error) { return v, false, nil },
		Write: func(ctx context.Context, v *adminpb.Role) (*adminpb.Role, error) {
			return c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: v.Name, Role: v})
		},
		Etag: func(v *adminpb.Role) string { return string(v.Etag) },
	})
	return err
}

// grant owns its retries (the Updater's): a fact says so.
func grant(ctx context.Context, u *policy.Updater) error { // want grant:`callsOwner\(policy.Updater.Update\)`
	_, err := u.Update(ctx, "projects/p", policy.AddBinding("roles/viewer", "user:a@example.com"))
	return err
}

// grantTwice owns them through grant.
func grantTwice(ctx context.Context, u *policy.Updater) error { // want grantTwice:`callsOwner\(policy.Updater.Update\)`
	return grant(ctx, u)
}

func throughHelper(ctx context.Context, r *interceptor.Retrier, u *policy.Updater) error { // want throughHelper:`callsOwner`
	return r.Do(ctx, "grant", func(ctx context.Context) error {
		return grantTwice(ctx, u) // want `grantTwice calls policy.Updater.Update, inside the function given to interceptor.Retrier.Do`
	})
}

func otherPackage(ctx context.Context, r *interceptor.Retrier, u *policy.Updater) error { // want otherPackage:`callsOwner`
	return r.Do(ctx, "grant", func(ctx context.Context) error {
		return steps.Grant(ctx, u) // want `Grant calls policy.Updater.Update, inside the function given to interceptor.Retrier.Do`
	})
}

type step struct{ u *policy.Updater }

func (s step) run(ctx context.Context) error { // want run:`callsOwner`
	return grant(ctx, s.u)
}

func namedFunc(ctx context.Context, r *interceptor.Retrier, s step) error { // want namedFunc:`callsOwner`
	return r.Do(ctx, "step", s.run) // want `run calls policy.Updater.Update, and is given to interceptor.Retrier.Do`
}

// Not reported: owners in sequence, and plain client calls inside Do.
func sequence(ctx context.Context, r *interceptor.Retrier, u *policy.Updater, c *admin.IamClient) error { // want sequence:`callsOwner`
	if err := r.Do(ctx, "get", func(ctx context.Context) error {
		_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
		return err
	}); err != nil {
		return err
	}
	return grant(ctx, u)
}

// Not reported: silenced.
func ignored(ctx context.Context, r *interceptor.Retrier, u *policy.Updater) error { // want ignored:`callsOwner`
	return r.Do(ctx, "grant", func(ctx context.Context) error {
		return grant(ctx, u) //iamretryvet:ignore nestedowner r has WithMaxAttempts(1)
	})
}
