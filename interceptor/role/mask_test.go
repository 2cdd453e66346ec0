package role_test

import (
	"context"
	"slices"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestMaskClearsToZeroValues: a field set to its zero value (an empty
// title, no permissions, the stage ALPHA, which is enum value 0) is in the
// update_mask and reaches IAM as a cleared field, over gRPC and REST alike
// (the REST body omits zero values: the mask alone says to clear them).
func TestMaskClearsToZeroValues(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get", "run.services.update")
			rec := &recorder{Client: k.client(e)}
			u := e.updater(t, rec)
			got, err := u.Update(context.Background(), roleName,
				role.SetTitle(""), role.RemovePermissions("run.services.get", "run.services.update"), role.SetStage(adminpb.Role_ALPHA))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"title", "included_permissions", "stage"}; !slices.Equal(rec.updates[0].UpdateMask.GetPaths(), want) {
				t.Fatalf("mask %v, want %v", rec.updates[0].UpdateMask.GetPaths(), want)
			}
			stored := e.srv.CustomRole(roleName)
			if stored.Title != "" || len(stored.IncludedPermissions) != 0 || stored.Stage != adminpb.Role_ALPHA || stored.Description != "deploys" {
				t.Fatalf("stored %v, want title, permissions and stage cleared, the description kept", stored)
			}
			if got.Title != "" || len(got.IncludedPermissions) != 0 || got.Stage != adminpb.Role_ALPHA {
				t.Fatalf("answered %v", got)
			}
		})
	}
}

// TestMaskNamesOnlyValueChanges: a Change that reports a change but sets a
// field to the value it holds (a custom Change rewriting the title, or
// reordering and repeating the permissions, or a change undone by a later
// one) writes nothing; a real change beside them is the mask's only path,
// and the request carries only that field.
func TestMaskNamesOnlyValueChanges(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get", "run.services.update")
			rec := &recorder{Client: k.client(e)}
			u := e.updater(t, rec)
			same := func(r *adminpb.Role) (bool, error) {
				r.Title = "Deployer"
				r.Stage = adminpb.Role_BETA
				r.IncludedPermissions = []string{"run.services.update", "run.services.get", "run.services.update"}
				return true, nil
			}
			ctx := context.Background()
			if _, err := u.Update(ctx, roleName, same, role.SetTitle("x"), role.SetTitle("Deployer")); err != nil {
				t.Fatal(err)
			}
			if len(rec.updates) != 0 {
				t.Fatalf("wrote %v for changes that leave every value as read", rec.updates[0])
			}
			if _, err := u.Update(ctx, roleName, same, role.SetDescription("d2")); err != nil {
				t.Fatal(err)
			}
			if len(rec.updates) != 1 || !slices.Equal(rec.updates[0].UpdateMask.GetPaths(), []string{"description"}) {
				t.Fatalf("updates %v, want one with mask [description]", rec.updates)
			}
			if r := rec.updates[0].Role; r.Title != "" || r.IncludedPermissions != nil || r.Stage != 0 || r.Description != "d2" {
				t.Fatalf("request role %v, want the description alone", r)
			}
			if n, _ := e.calls(iamtest.MethodUpdateRole); n != 1 {
				t.Fatalf("%d UpdateRole calls, want 1", n)
			}
		})
	}
}
