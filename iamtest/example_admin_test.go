package iamtest_test

import (
	"context"
	"fmt"
	"log"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
)

// A custom role's read-modify-write: the etag read is sent back with the
// update; a writer that read before another write is refused ABORTED, as
// IAM refuses it, and must read again.
func ExampleServer_CustomRole() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	if _, err := client.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/my-project", RoleId: "deployer",
		Role: &adminpb.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.update"}}}); err != nil {
		log.Fatal(err)
	}
	read, _ := client.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/my-project/roles/deployer"})
	update := func(perms ...string) error {
		_, err := client.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: read.Name,
			Role:       &adminpb.Role{IncludedPermissions: perms, Etag: read.Etag},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"included_permissions"}}}, gax.WithRetry(nil))
		return err
	}
	fmt.Println("first writer:", status.Code(update("run.services.update", "iam.serviceAccounts.actAs")))
	fmt.Println("stale writer:", status.Code(update("run.services.get")))
	fmt.Println("stored:", srv.CustomRole(read.Name).GetIncludedPermissions())
	// Output:
	// first writer: OK
	// stale writer: Aborted
	// stored: [run.services.update iam.serviceAccounts.actAs]
}

// SetCallerPermissions says which permissions the caller holds on a
// resource: TestIamPermissions answers the subset asked for.
func ExampleServer_SetCallerPermissions() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetCallerPermissions("projects/my-project", "resourcemanager.projects.get")
	resp, err := client.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/my-project",
		Permissions: []string{"resourcemanager.projects.get", "resourcemanager.projects.delete"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetPermissions())
	// Output:
	// [resourcemanager.projects.get]
}

// The call log says whether the server acted: a create whose answer was
// lost committed (Applied), so its retry finds the account already there.
// "Landed exactly once" is the count of Applied calls.
func ExampleCall_applied() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.LoseNextAnswers(iamtest.MethodCreateServiceAccount, 1)
	req := &adminpb.CreateServiceAccountRequest{Name: "projects/my-project", AccountId: "deployer"}
	for range 2 {
		_, _ = client.CreateServiceAccount(ctx, req, gax.WithRetry(nil))
	}
	applied := 0
	for _, c := range srv.Calls() {
		fmt.Println(c.Code, "injected:", c.Injected, "applied:", c.Applied)
		if c.Applied {
			applied++
		}
	}
	fmt.Println("landed:", applied)
	// Output:
	// Unavailable injected: true applied: true
	// AlreadyExists injected: false applied: false
	// landed: 1
}

// SetServiceAccountQuota lowers the 100 accounts a project may hold, so a
// test reaches IAM's 429 quickly.
func ExampleServer_SetServiceAccountQuota() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetServiceAccountQuota(1)
	for _, id := range []string{"first-one", "second-one"} {
		_, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/my-project", AccountId: id}, gax.WithRetry(nil))
		if err != nil {
			fmt.Println(id, status.Code(err), status.Convert(err).Message())
		} else {
			fmt.Println(id, "created")
		}
	}
	// Output:
	// first-one created
	// second-one ResourceExhausted Maximum number of service accounts on project reached.
}
