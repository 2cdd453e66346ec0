package iamtest_test

import (
	"context"
	"fmt"
	"log"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/iamtest"
)

// A test starts from a policy already in place: SeedPolicy stores it in
// IAM's form (members in stored case, duplicates merged) without a call, and
// clients read it with its etag.
func ExampleServer_SeedPolicy() {
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

	stored := srv.SeedPolicy("projects/my-project", &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:Alice@Example.com", "user:alice@example.com"}},
	}})
	p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.GetBindings()[0].GetMembers(), string(p.GetEtag()) == string(stored.GetEtag()))
	fmt.Println("calls:", srv.CountCalls(iamtest.AnyMethod))
	// Output:
	// [user:alice@example.com] true
	// calls: 1
}

// Policy shows what the fake holds, without a call: here, what code under
// test wrote.
func ExampleServer_Policy() {
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

	fmt.Println("before:", len(srv.Policy("folders/42").GetBindings()), "bindings, version", srv.Policy("folders/42").GetVersion())
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{{Role: "roles/browser", Members: []string{"group:ops@example.com"}}}}})
	if err != nil {
		log.Fatal(err)
	}
	p := srv.Policy("folders/42")
	fmt.Println("after:", p.GetBindings()[0].GetRole(), p.GetBindings()[0].GetMembers(), "version", p.GetVersion())
	// Output:
	// before: 0 bindings, version 0
	// after: roles/browser [group:ops@example.com] version 1
}

// A seeded service account is visible at once, even while new accounts
// propagate.
func ExampleServer_SeedServiceAccount() {
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

	srv.SetPropagationReads(3)
	sa := srv.SeedServiceAccount("my-project", "deployer")
	got, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println(got.GetEmail(), err)
	// Output:
	// deployer@my-project.iam.gserviceaccount.com <nil>
}

// ServiceAccount sees what the fake holds, even an account that reads do not
// show yet.
func ExampleServer_ServiceAccount() {
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

	srv.SetPropagationReads(1)
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/my-project", AccountId: "new-robot"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println("read:", err != nil)
	fmt.Println("held:", srv.ServiceAccount(sa.GetEmail()).GetEmail())
	fmt.Println("unknown:", srv.ServiceAccount("nobody@my-project.iam.gserviceaccount.com") == nil)
	// Output:
	// read: true
	// held: new-robot@my-project.iam.gserviceaccount.com
	// unknown: true
}

// Each CreateServiceAccountKey mints a key: code that retries it after a lost
// answer leaves a key behind, which ServiceAccountKeys shows.
func ExampleServer_ServiceAccountKeys() {
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

	sa := srv.SeedServiceAccount("my-project", "key-robot")
	srv.LoseNextAnswers(iamtest.MethodCreateServiceAccountKey, 1)
	for range 2 { // a naive retry after the lost answer
		_, err = client.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.GetName()})
		if err == nil {
			break
		}
	}
	fmt.Println("keys:", len(srv.ServiceAccountKeys(sa.GetName())))
	// Output:
	// keys: 2
}
