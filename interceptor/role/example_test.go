package role_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// exampleSetup starts a fake IAM with a custom role and returns it, the
// admin client (the Retrier's interceptor beneath, gax retries off) and the
// Retrier, all on one virtual clock, so that backoff takes no real time.
func exampleSetup() (*iamtest.Server, *admin.IamClient, *interceptor.Retrier, error) {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := interceptor.New(interceptor.WithClock(clock)) // leave the clock out in a program
	if err != nil {
		srv.Close()
		return nil, nil, nil, err
	}
	client, err := admin.NewIamClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		srv.Close()
		return nil, nil, nil, err
	}
	if err := interceptor.DisableGAXRetries(client.CallOptions); err != nil {
		client.Close()
		srv.Close()
		return nil, nil, nil, err
	}
	if _, err := client.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/my-project", RoleId: "deployer",
		Role: &adminpb.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.get"}}}); err != nil {
		client.Close()
		srv.Close()
		return nil, nil, nil, err
	}
	srv.ResetCalls()
	return srv, client, r, nil
}

// An Updater changes a custom role through the admin client. The write
// commits but its answer is lost: the rerun reads the role, finds the
// change made and writes nothing. A second Update changes nothing and
// writes nothing either.
func ExampleUpdater_Update() {
	srv, client, r, err := exampleSetup()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	defer client.Close()

	u, err := role.NewUpdater(client, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	srv.LoseNextAnswers(iamtest.MethodUpdateRole, 1)
	for range 2 {
		got, err := u.Update(ctx, "projects/my-project/roles/deployer",
			role.AddPermissions("run.services.update", "iam.serviceAccounts.actAs"),
			role.SetStage(adminpb.Role_GA))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(got.IncludedPermissions, got.Stage)
	}
	fmt.Println("GetRole calls:", srv.CountCalls(iamtest.MethodGetRole), "UpdateRole calls:", srv.CountCalls(iamtest.MethodUpdateRole))
	// Output:
	// [run.services.get run.services.update iam.serviceAccounts.actAs] GA
	// [run.services.get run.services.update iam.serviceAccounts.actAs] GA
	// GetRole calls: 3 UpdateRole calls: 1
}

// Changes read like the edit they make; each is idempotent, and the write's
// update_mask names only the fields whose value changed.
func ExampleRemovePermissions() {
	srv, client, r, err := exampleSetup()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	defer client.Close()

	u, err := role.NewUpdater(client, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	got, err := u.Update(context.Background(), "projects/my-project/roles/deployer",
		role.RemovePermissions("run.services.get"),
		role.AddPermissions("run.services.list"),
		role.SetTitle("Deployer"), // the title it has: not in the mask
		role.SetDescription("Deploys Cloud Run services"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q %v\n", got.Title, got.Description, got.IncludedPermissions)
	// Output:
	// "Deployer" "Deploys Cloud Run services" [run.services.list]
}

// A predefined role is refused before any call; a deleted one after the
// read, before any write.
func ExampleErrDeleted() {
	srv, client, r, err := exampleSetup()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	defer client.Close()

	u, err := role.NewUpdater(client, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_, err = u.Update(ctx, "roles/viewer", role.AddPermissions("run.services.get"))
	fmt.Println(errors.Is(err, role.ErrPredefined), status.Code(err))

	if _, err := client.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: "projects/my-project/roles/deployer"}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = u.Update(ctx, "projects/my-project/roles/deployer", role.AddPermissions("run.services.update"))
	fmt.Println(errors.Is(err, role.ErrDeleted), status.Code(err))
	fmt.Println("UpdateRole calls:", srv.CountCalls(iamtest.MethodUpdateRole))
	// Output:
	// true InvalidArgument
	// true FailedPrecondition
	// UpdateRole calls: 0
}
