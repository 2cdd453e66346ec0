package deny_test

import (
	"context"
	"fmt"
	"log"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// exampleServer starts the fake on a virtual clock and returns an Updater
// over iam/apiv2's gRPC PoliciesClient, its Retrier's interceptor beneath.
// In a program: the real client and interceptor.WallClock (the default);
// the Updater polls operations on its Retrier's clock.
func exampleServer(opts ...deny.Option) (*iamtest.Server, *deny.Updater, func()) {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	r, err := interceptor.New(interceptor.WithClock(clock), interceptor.WithRandom(func() float64 { return 0.5 }))
	if err != nil {
		log.Fatal(err)
	}
	client, err := iamv2.NewPoliciesClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		log.Fatal(err)
	}
	if err := interceptor.DisableGAXRetries(client.CallOptions); err != nil {
		log.Fatal(err)
	}
	u, err := deny.NewUpdater(client, r, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return srv, u, func() { client.Close(); srv.Close() }
}

// Add a deny rule to a policy while IAM fails, loses an answer and takes
// 20 s to complete each update: the rule lands once. The first update's
// answer is lost but its operation runs on: the fresh read does not show
// it yet, so a second update is sent with the same etag; the first
// completes, and the second's operation (polled at 0, 1, 3, 7, 15 and 31 s)
// completes with a stale-etag error, a conflict: the fresh read after it
// finds the rule, and nothing more is written.
func ExampleUpdater_Update() {
	srv, u, closeAll := exampleServer()
	defer closeAll()
	const name = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/guardrails"
	srv.SeedDenyPolicy(name, &iampb.Policy{DisplayName: "guardrails"})

	srv.FailNext(iamtest.MethodGetPolicy, 1, grpccodes.Unavailable)
	srv.LoseNextAnswers(iamtest.MethodUpdatePolicy, 1)
	srv.SetDenyOperationDelay(20 * time.Second)
	noRoleDeletion := deny.Rule{
		Description:         "contractors cannot delete roles",
		DeniedPrincipals:    []string{"principalSet://goog/group/contractors@example.com"},
		ExceptionPrincipals: []string{"principal://goog/subject/lead@example.com"},
		DeniedPermissions:   []string{"iam.googleapis.com/roles.delete"},
	}
	p, err := u.Update(context.Background(), name, deny.AddRule(noRoleDeletion))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rules:", len(p.GetRules()))
	for _, c := range srv.Calls() {
		fmt.Println(c.Method, c.Code)
	}

	// Again, its lists in another order: the rule is there, nothing is written.
	noRoleDeletion.DeniedPermissions = []string{"iam.googleapis.com/roles.delete", "iam.googleapis.com/roles.delete"}
	p, _ = u.Update(context.Background(), name, deny.AddRule(noRoleDeletion))
	fmt.Println("rules:", len(p.GetRules()), "UpdatePolicy calls:", srv.CountCalls(iamtest.MethodUpdatePolicy))
	// Output:
	// rules: 1
	// /google.iam.v2.Policies/GetPolicy Unavailable
	// /google.iam.v2.Policies/GetPolicy OK
	// /google.iam.v2.Policies/UpdatePolicy Unavailable
	// /google.iam.v2.Policies/GetPolicy OK
	// /google.iam.v2.Policies/UpdatePolicy OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.longrunning.Operations/GetOperation OK
	// /google.iam.v2.Policies/GetPolicy OK
	// rules: 1 UpdatePolicy calls: 2
}

// With CreateIfAbsent, a change to a policy that does not exist creates it.
func ExampleCreateIfAbsent() {
	srv, u, closeAll := exampleServer(deny.CreateIfAbsent())
	defer closeAll()
	const name = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/new-policy"
	p, err := u.Update(context.Background(), name, deny.AddRule(deny.Rule{
		DeniedPrincipals:  []string{deny.PublicAll},
		DeniedPermissions: []string{"iam.googleapis.com/serviceAccountKeys.create"},
	}))
	if err != nil {
		log.Fatal(err)
	}
	// The answer names the project by number, as IAM's answers do.
	fmt.Println(p.GetName())
	fmt.Println(len(p.GetRules()), srv.CountCalls(iamtest.MethodCreatePolicy))
	// Output:
	// policies/cloudresourcemanager.googleapis.com%2Fprojects%2F642627587659/denypolicies/new-policy
	// 1 1
}

// Malformed rules are refused before any call, naming each bad value; an
// allow-policy member or an IAM v1 permission gets a hint.
func ExampleAddRule() {
	_, u, closeAll := exampleServer()
	defer closeAll()
	_, err := u.Update(context.Background(), "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/d",
		deny.AddRule(deny.Rule{
			DeniedPrincipals:  []string{"group:admins@example.com"},
			DeniedPermissions: []string{"iam.roles.delete"},
		}))
	fmt.Println(status.Code(err))
	fmt.Println(err)
	// Output:
	// InvalidArgument
	// iamretry/deny: update of policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies/d: change 1 of 1: AddRule: DeniedPrincipals: invalid principal "group:admins@example.com": that is an allow-policy member (IAM v1): deny policies name principals with IAM v2 identifiers, such as principal://goog/subject/EMAIL, principalSet://goog/group/GROUP_EMAIL, principal://iam.googleapis.com/projects/-/serviceAccounts/SA_EMAIL
	// DeniedPermissions: invalid permission "iam.roles.delete": that is an IAM v1 permission (SERVICE.RESOURCE.ACTION): deny policies use SERVICE_FQDN/RESOURCE.ACTION, such as iam.googleapis.com/roles.list
}

// Rules compare with their lists as sets.
func ExampleRule_Equal() {
	a := deny.Rule{DeniedPrincipals: []string{"principal://goog/subject/a@example.com", "principal://goog/subject/b@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"}}
	b := deny.Rule{DeniedPrincipals: []string{"principal://goog/subject/b@example.com", "principal://goog/subject/a@example.com"},
		DeniedPermissions: []string{"iam.googleapis.com/roles.delete"}}
	fmt.Println(a.Equal(b))
	b.Description = "another"
	fmt.Println(a.Equal(b))
	// Output:
	// true
	// false
}
