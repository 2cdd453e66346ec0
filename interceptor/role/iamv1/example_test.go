package iamv1_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
	"github.com/iamretry/iamretry/interceptor/role/iamv1"
)

// Roles adapts the IAM v1 discovery client: the Updater reads the role with
// projects.roles.get and writes it with projects.roles.patch, the etag read
// and updateMask. The first write fails 503 and is not replayed alone: the
// whole read-modify-write runs again from a fresh read.
func ExampleRoles() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(clock)) // leave the clock out in a program
	if err != nil {
		fmt.Println(err)
		return
	}
	hc := &http.Client{Transport: r.RoundTripper(srv.HTTPClient().Transport)}
	s, err := iam.NewService(ctx, append(srv.RESTClientOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.Projects.Roles.Create("projects/my-project", &iam.CreateRoleRequest{RoleId: "deployer",
		Role: &iam.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.get"}}}).Do(); err != nil {
		fmt.Println(err)
		return
	}
	srv.ResetCalls()

	u, err := role.NewUpdater(iamv1.Roles(s), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.FailNext(iamtest.MethodUpdateRole, 1, codes.Unavailable) // HTTP 503
	got, err := u.Update(ctx, "projects/my-project/roles/deployer", role.AddPermissions("run.services.update"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.IncludedPermissions)
	for _, c := range srv.Calls() {
		fmt.Println(c.Method, c.Code)
	}
	// Output:
	// [run.services.get run.services.update]
	// /google.iam.admin.v1.IAM/GetRole OK
	// /google.iam.admin.v1.IAM/UpdateRole Unavailable
	// /google.iam.admin.v1.IAM/GetRole OK
	// /google.iam.admin.v1.IAM/UpdateRole OK
}
