package policy_test

import (
	"context"
	"fmt"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/fakeiam"
	"github.com/iamretry/iamretry/internal/vclock"
)

// Grant a role on a service account through the admin client: the write's
// answer is lost once and the rerun finds the grant made; a second run
// changes nothing and writes nothing.
func Example() {
	ctx := context.Background()
	srv := fakeiam.New() // in a real program: admin.NewIamClient(ctx)
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	client.CallOptions = &admin.IamCallOptions{} // retry at one layer: the Updater's

	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "deployer"})
	if err != nil {
		panic(err)
	}

	// A virtual clock so that the example does not wait out its backoff.
	u, err := policy.NewUpdater(policy.FromAdmin(client), interceptor.WithClock(vclock.New()))
	if err != nil {
		panic(err)
	}
	srv.LoseNextAnswers(fakeiam.MethodAdminSetIamPolicy, 1)
	for range 2 {
		p, err := u.Update(ctx, sa.Name,
			policy.AddBinding("roles/iam.serviceAccountUser", "user:Alice@Example.com"))
		if err != nil {
			panic(err)
		}
		for _, b := range p.Bindings {
			fmt.Println(b.Role, b.Members)
		}
	}
	fmt.Println("writes:", srv.CountCalls(fakeiam.MethodAdminSetIamPolicy))
	// Output:
	// roles/iam.serviceAccountUser [user:alice@example.com]
	// roles/iam.serviceAccountUser [user:alice@example.com]
	// writes: 1
}
