package role_test

import (
	"context"
	"slices"
	"testing"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestConcurrentWriteNextOnRole: the fake's interleaved writer on
// UpdateRole moves the role's etag before the write, which fails ABORTED;
// the Updater reruns the read-modify-write from a fresh read and lands the
// change once, over gRPC and REST.
func TestConcurrentWriteNextOnRole(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			e.srv.ConcurrentWriteNext(iamtest.MethodUpdateRole, 1)
			u := e.updater(t, k.client(e))
			got, err := u.Update(context.Background(), roleName, role.AddPermissions("run.services.update"))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.IncludedPermissions, []string{"run.services.get", "run.services.update"}) {
				t.Fatalf("after Update: %v", got.IncludedPermissions)
			}
			if n, applied := e.calls(iamtest.MethodUpdateRole); n != 2 || applied != 1 {
				t.Fatalf("UpdateRole: %d calls, %d applied; want 2 (the first refused ABORTED), 1", n, applied)
			}
			if n, _ := e.calls(iamtest.MethodGetRole); n != 2 {
				t.Fatalf("GetRole: %d calls, want 2 (the rerun reads again)", n)
			}
		})
	}
}
