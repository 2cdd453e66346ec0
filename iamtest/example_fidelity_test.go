package iamtest_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// A new account answers NOT_FOUND, then PERMISSION_DENIED, while it
// propagates, as IAM has been seen to.
func ExampleServer_SetPropagationCodes() {
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
	srv.SetPropagationCodes(codes.NotFound, codes.PermissionDenied)
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/my-project", AccountId: "new-robot"})
	if err != nil {
		log.Fatal(err)
	}
	for range 4 {
		_, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()}, gax.WithRetry(nil))
		fmt.Print(status.Code(err), " ")
	}
	fmt.Println()
	// Output:
	// NotFound PermissionDenied PermissionDenied OK
}

// For 10 s after a write, reads answer the policy before it, and a write
// carrying that stale etag is refused: the read-modify-write must run again.
func ExampleServer_SetStaleReads() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.SetStaleReads(10 * time.Second)
	read := func() *iampb.Policy {
		p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/42"})
		if err != nil {
			log.Fatal(err)
		}
		return p
	}
	p := read()
	p.Bindings = []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}
	if _, err := client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: p}); err != nil {
		log.Fatal(err)
	}
	stale := read()
	fmt.Println("stale read:", len(stale.GetBindings()), "bindings")
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: stale})
	fmt.Println("write with its etag:", status.Code(err))
	clock.Advance(10 * time.Second)
	fmt.Println("later:", len(read().GetBindings()), "binding")
	// Output:
	// stale read: 0 bindings
	// write with its etag: Aborted
	// later: 1 binding
}

// A version-1 read of a policy with conditions: refused by default, or
// answered with suffixed roles.
func ExampleServer_SetConditionalRead() {
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

	srv.SeedPolicy("folders/42", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{{
		Role: "roles/browser", Members: []string{"user:alice@example.com"},
		Condition: &expr.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`},
	}}})
	readV1 := func() (*iampb.Policy, error) {
		return client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/42",
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 1}})
	}
	_, err = readV1()
	fmt.Println(iamtest.RefuseConditionalRead, status.Code(err))
	srv.SetConditionalRead(iamtest.SuffixConditionalRoles)
	p, err := readV1()
	if err != nil {
		log.Fatal(err)
	}
	role := p.GetBindings()[0].GetRole()
	fmt.Println(iamtest.SuffixConditionalRoles, role[:strings.LastIndex(role, "_")+1], p.GetBindings()[0].GetCondition() == nil)
	// Output:
	// RefuseConditionalRead InvalidArgument
	// SuffixConditionalRoles roles/browser_withcond_ true
}

// A grant to an account that does not exist is refused, as IAM refuses it.
func ExampleServer_SetRefuseUnknownServiceAccounts() {
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

	srv.SetRefuseUnknownServiceAccounts(true)
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"serviceAccount:ghost@my-project.iam.gserviceaccount.com"}}}}})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	// Output:
	// InvalidArgument Service account ghost@my-project.iam.gserviceaccount.com does not exist.
}

// The organization policy that forbids key creation, in force.
func ExampleServer_SetKeyCreationDisabled() {
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
	srv.SetKeyCreationDisabled(true)
	_, err = client.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.GetName()})
	fmt.Println(status.Code(err), status.Convert(err).Message())
	for _, d := range status.Convert(err).Details() {
		if pf, ok := d.(*errdetails.PreconditionFailure); ok {
			fmt.Println(pf.GetViolations()[0].GetType())
		}
	}
	// Output:
	// FailedPrecondition Key creation is not allowed on this service account.
	// constraints/iam.disableServiceAccountKeyCreation
}

// An account's 11th key refused as IAM used to refuse it: a quota error
// with a day of RetryInfo.
func ExampleServer_SetKeyLimitExhausted() {
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
	srv.SetKeyLimitExhausted(true)
	for range 11 {
		_, err = client.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.GetName()})
	}
	fmt.Println(status.Code(err), status.Convert(err).Message())
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			fmt.Println(ri.GetRetryDelay().AsDuration())
		}
	}
	// Output:
	// ResourceExhausted Maximum number of keys on account reached.
	// 24h0m1s
}

// Injected errors read like IAM's, for code that shows or matches messages.
func ExampleServer_SetIAMMessages() {
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

	srv.SetIAMMessages(true)
	srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	fmt.Println(status.Convert(err).Message())
	// Output:
	// The service is currently unavailable.
}

// With known roles only, a role the fake does not know is refused.
func ExampleServer_SetKnownRolesOnly() {
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

	srv.SetKnownRolesOnly(true)
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{{Role: "organizations/1/roles/auditor", Members: []string{"group:audit@example.com"}}}}})
	fmt.Println(status.Convert(err).Message())
	// Output:
	// Role organizations/1/roles/auditor is not supported for this resource.
}

// GetRole answers any well-formed predefined role; SetPredefinedRole gives
// one the permissions a test reads back.
func ExampleServer_SetPredefinedRole() {
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

	r, err := client.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/storage.objectViewer"})
	fmt.Println(r.GetName(), r.GetIncludedPermissions(), err)
	srv.SetPredefinedRole("roles/storage.objectViewer", "Storage Object Viewer", "storage.objects.get", "storage.objects.list")
	r, err = client.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/storage.objectViewer"})
	fmt.Println(r.GetTitle(), r.GetIncludedPermissions(), err)
	// Output:
	// roles/storage.objectViewer [] <nil>
	// Storage Object Viewer [storage.objects.get storage.objects.list] <nil>
}

// A custom role becomes known to SetKnownRolesOnly.
func ExampleServer_AddRoles() {
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

	srv.SetKnownRolesOnly(true)
	srv.AddRoles("organizations/1/roles/auditor")
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "folders/42", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{{Role: "organizations/1/roles/auditor", Members: []string{"group:audit@example.com"}}}}})
	fmt.Println(status.Code(err))
	// Output:
	// OK
}

// Bindings come back in a seeded, shuffled order: code that relies on the
// order it wrote fails here as it may in production.
func ExampleServer_SetShuffleBindings() {
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

	p := &iampb.Policy{}
	for _, r := range []string{"roles/browser", "roles/editor", "roles/viewer"} {
		p.Bindings = append(p.Bindings, &iampb.Binding{Role: r, Members: []string{"user:alice@example.com"}})
	}
	srv.SeedPolicy("folders/42", p)
	srv.SetShuffleBindings(true)
	for range 3 {
		got, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/42"})
		if err != nil {
			log.Fatal(err)
		}
		var roles []string
		for _, b := range got.GetBindings() {
			roles = append(roles, b.GetRole())
		}
		fmt.Println(roles)
	}
	// Output:
	// [roles/editor roles/browser roles/viewer]
	// [roles/browser roles/viewer roles/editor]
	// [roles/browser roles/editor roles/viewer]
}

// The same seed gives the same orders.
func ExampleServer_SeedShuffle() {
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

	p := &iampb.Policy{}
	for _, r := range []string{"roles/browser", "roles/editor", "roles/viewer", "roles/owner"} {
		p.Bindings = append(p.Bindings, &iampb.Binding{Role: r, Members: []string{"serviceAccount:ci@my-project.iam.gserviceaccount.com"}})
	}
	srv.SeedPolicy("folders/42", p)
	srv.SetShuffleBindings(true)
	order := func() string {
		got, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/42"})
		if err != nil {
			log.Fatal(err)
		}
		var roles []string
		for _, b := range got.GetBindings() {
			roles = append(roles, strings.TrimPrefix(b.GetRole(), "roles/"))
		}
		return strings.Join(roles, " ")
	}
	srv.SeedShuffle(42)
	first := order()
	srv.SeedShuffle(42)
	fmt.Println(first == order())
	// Output:
	// true
}

// With a project registered, an unknown project answers PERMISSION_DENIED,
// and the project's number names the same policy as its ID.
func ExampleServer_RegisterProject() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	srv.RegisterProject("my-project", 123456789012)
	srv.SeedPolicy("projects/my-project", &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}})
	p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/123456789012"})
	fmt.Println(p.GetBindings()[0].GetMembers(), err)
	_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/typo-project"})
	fmt.Println(status.Code(err))
	// Output:
	// [user:alice@example.com] <nil>
	// PermissionDenied
}

// A user may own a project only once invited.
func ExampleServer_InviteOwner() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	owner := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/owner", Members: []string{"user:bob@example.com"}}}}
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: owner})
	fmt.Println("not invited:", status.Code(err))
	srv.InviteOwner("my-project", "user:bob@example.com")
	_, err = client.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: owner})
	fmt.Println("invited:", status.Code(err))
	// Output:
	// not invited: InvalidArgument
	// invited: OK
}
