package role_test

import (
	"context"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// NewUpdater runs on the Retrier the admin client is wired to by
// interceptor.NewClient: the read fails UNAVAILABLE once and the Updater
// retries it on r's schedule. A missing Retrier, or a predefined role, is
// refused by name before any call.
func ExampleNewUpdater() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(clock)) // no clock in a program
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	if _, err := client.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/my-project", RoleId: "deployer",
		Role: &adminpb.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.get"}}}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := role.NewUpdater(client, nil); err != nil {
		fmt.Println(err)
	}
	u, err := role.NewUpdater(client, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.FailNext(iamtest.MethodGetRole, 1, codes.Unavailable)
	got, err := u.Update(ctx, "projects/my-project/roles/deployer", role.AddPermissions("run.services.update"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.GetIncludedPermissions(), "reads:", srv.CountCalls(iamtest.MethodGetRole))
	_, err = u.Update(ctx, "roles/viewer", role.AddPermissions("run.services.update"))
	fmt.Println(err)
	// Output:
	// iamretry/role: NewUpdater needs the *interceptor.Retrier it runs on; got nil (build one with interceptor.New)
	// [run.services.get run.services.update] reads: 2
	// iamretry/role: update of roles/viewer: predefined roles (roles/...) cannot be changed: only custom roles (projects/PROJECT_ID/roles/ID, organizations/ORG_ID/roles/ID) can
}
