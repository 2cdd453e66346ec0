package role_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// cancelBefore is a role.Client that cancels the caller's context just
// before its n-th call, then makes the call: the caller cancelling while
// the call is on its way.
type cancelBefore struct {
	role.Client
	n      int
	cancel context.CancelFunc
}

func (c *cancelBefore) tick() {
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

func (c *cancelBefore) GetRole(ctx context.Context, req *adminpb.GetRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	c.tick()
	return c.Client.GetRole(ctx, req, opts...)
}

func (c *cancelBefore) UpdateRole(ctx context.Context, req *adminpb.UpdateRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	c.tick()
	return c.Client.UpdateRole(ctx, req, opts...)
}

// outcome is what a caller can tell of an Update's failure.
type outcome struct {
	status, codeOf grpccodes.Code
	canceled       bool // errors.Is(err, context.Canceled)
	deleted        bool // errors.Is(err, role.ErrDeleted)
	calls          []string
}

func (o outcome) String() string {
	return fmt.Sprintf("status.Code %v, codes.CodeOf %v, errors.Is Canceled %v, ErrDeleted %v, calls %v", o.status, o.codeOf, o.canceled, o.deleted, o.calls)
}

// TestSameFailureSameAnswer: the same failure, met through the admin client
// (gRPC) and the IAM v1 discovery client (REST), gives the caller the same
// code (status.Code, as the package promises, and codes.CodeOf), the same
// errors.Is answers, and the same calls.
func TestSameFailureSameAnswer(t *testing.T) {
	type scenario struct {
		name     string
		setup    func(e *env)
		changes  []role.Change
		cancelAt int // cancel ctx just before the n-th call (0: never)
	}
	add := []role.Change{role.AddPermissions("run.services.update")}
	scenarios := []scenario{
		{name: "absent role", setup: func(*env) {}, changes: add},
		{name: "permission denied read", setup: func(e *env) {
			e.createRole(t, "run.services.get")
			e.srv.FailNextWith(iamtest.MethodGetRole, 1, iamtest.PermissionDeniedError("iam.roles.get", roleName))
		}, changes: add},
		{name: "unknown permission", setup: func(e *env) { e.createRole(t, "run.services.get") },
			changes: []role.Change{role.AddPermissions("notapermission")}},
		{name: "title too long", setup: func(e *env) { e.createRole(t, "run.services.get") },
			changes: []role.Change{role.SetTitle(string(make([]byte, 101)))}},
		{name: "failed precondition, etag unmoved", setup: func(e *env) {
			e.createRole(t, "run.services.get")
			e.srv.FailNext(iamtest.MethodUpdateRole, 1, grpccodes.FailedPrecondition)
		}, changes: add},
		{name: "outage past the attempt cap", setup: func(e *env) {
			e.createRole(t, "run.services.get")
			e.srv.FailNext(iamtest.MethodGetRole, 5, grpccodes.Unavailable)
		}, changes: add},
		{name: "deleted", setup: func(e *env) {
			e.createRole(t, "run.services.get")
			if _, err := e.admin.DeleteRole(context.Background(), &adminpb.DeleteRoleRequest{Name: roleName}); err != nil {
				t.Fatal(err)
			}
		}, changes: add},
		{name: "cancelled during the read", setup: func(e *env) { e.createRole(t, "run.services.get") }, changes: add, cancelAt: 1},
		{name: "cancelled during the write", setup: func(e *env) { e.createRole(t, "run.services.get") }, changes: add, cancelAt: 2},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var got [2]outcome
			for i, k := range kinds {
				e := newEnv(t, interceptor.WithMaxAttempts(3))
				sc.setup(e)
				e.srv.ResetCalls()
				ctx, cancel := context.WithCancel(context.Background())
				var c role.Client = k.client(e)
				if sc.cancelAt > 0 {
					c = &cancelBefore{Client: c, n: sc.cancelAt, cancel: cancel}
				}
				_, err := e.updater(t, c).Update(ctx, roleName, sc.changes...)
				cancel()
				if err == nil {
					t.Fatalf("%s: no error", k.name)
				}
				o := outcome{status: status.Code(err), codeOf: codes.CodeOf(err), canceled: errors.Is(err, context.Canceled), deleted: errors.Is(err, role.ErrDeleted)}
				for _, c := range e.srv.Calls() {
					o.calls = append(o.calls, fmt.Sprintf("%s:%v", c.Method, c.Code))
				}
				got[i] = o
				t.Logf("%s: %v (%v)", k.name, o, err)
			}
			if got[0].status != got[1].status || got[0].codeOf != got[1].codeOf || got[0].canceled != got[1].canceled ||
				got[0].deleted != got[1].deleted || !slices.Equal(got[0].calls, got[1].calls) {
				t.Errorf("gRPC: %v\nREST: %v", got[0], got[1])
			}
			if got[0].status != got[0].codeOf {
				t.Errorf("status.Code %v but codes.CodeOf %v", got[0].status, got[0].codeOf)
			}
		})
	}
}
