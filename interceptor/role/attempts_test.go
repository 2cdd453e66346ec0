package role_test

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestConflictsDoNotCountTowardMaxAttempts: NewUpdater promises that reruns
// after a conflict never count toward the Retrier's attempt cap: with
// WithMaxAttempts(1), four concurrent changes in a row still end with the
// change made; a transient failure on top is the one attempt the cap
// allows no retry of.
func TestConflictsDoNotCountTowardMaxAttempts(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, transient := range []bool{false, true} {
				e := newEnv(t, interceptor.WithMaxAttempts(1))
				e.createRole(t, "run.services.get")
				rec := &recorder{Client: k.client(e)}
				ctx := context.Background()
				rec.beforeWrite = func(n int) {
					if n > 4 {
						if transient && n == 5 {
							e.srv.FailNext(iamtest.MethodUpdateRole, 1, codes.Unavailable)
						}
						return
					}
					cur, err := e.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: roleName}, gax.WithRetry(nil))
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := e.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: roleName,
						Role:       &adminpb.Role{Etag: cur.Etag, Description: cur.Description + "+"},
						UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description"}}}, gax.WithRetry(nil)); err != nil {
						t.Error(err)
					}
				}
				_, err := e.updater(t, rec).Update(ctx, roleName, role.AddPermissions("run.services.update"))
				if transient {
					if status.Code(err) != codes.Unavailable {
						t.Fatalf("a transient failure after 4 conflicts under WithMaxAttempts(1): %v, want UNAVAILABLE", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("4 conflicts under WithMaxAttempts(1): %v", err)
				}
				if n, _ := e.calls(iamtest.MethodUpdateRole); n != 5+4 {
					t.Fatalf("%d UpdateRole calls, want 5 of the Updater's and 4 of the other writer's", n)
				}
			}
		})
	}
}
