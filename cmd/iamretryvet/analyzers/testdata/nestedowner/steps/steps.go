// Package steps holds a function that owns its retries, for a caller in
// another package (facts cross packages).
package steps

import (
	"context"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// Grant grants through the Updater.
func Grant(ctx context.Context, u *policy.Updater) error { // want Grant:`callsOwner\(policy.Updater.Update\)`
	_, err := u.Update(ctx, "projects/p", policy.AddBinding("roles/viewer", "user:a@example.com"))
	return err
}
