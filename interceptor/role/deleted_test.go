package role_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestDeletedBetweenReadAndWrite: another writer deletes the role after the
// Updater's read and before its write. Whatever IAM answers the write, the
// Update ends with nothing written and the error a caller can act on:
// ErrDeleted (FAILED_PRECONDITION), over gRPC and REST alike.
func TestDeletedBetweenReadAndWrite(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			rec := &recorder{Client: k.client(e)}
			rec.beforeWrite = func(n int) {
				if n == 1 {
					if _, err := e.admin.DeleteRole(context.Background(), &adminpb.DeleteRoleRequest{Name: roleName}, gax.WithRetry(nil)); err != nil {
						t.Error(err)
					}
				}
			}
			_, err := e.updater(t, rec).Update(context.Background(), roleName, role.AddPermissions("run.services.update"))
			if !errors.Is(err, role.ErrDeleted) || status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("err %v (code %v), want ErrDeleted, FAILED_PRECONDITION", err, status.Code(err))
			}
			if _, applied := e.calls(iamtest.MethodUpdateRole); applied != 0 {
				t.Fatalf("%d writes applied", applied)
			}
			if got := e.srv.CustomRole(roleName).GetIncludedPermissions(); !slices.Equal(got, []string{"run.services.get"}) {
				t.Fatalf("stored %v", got)
			}
		})
	}
}
