package deny_test

import (
	"context"
	"fmt"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// NewUpdater runs on the Retrier its client is wired to: iam/apiv2's
// PoliciesClient built by interceptor.NewClient (gRPC) or NewRESTClient
// (REST), gax retries off and the Retrier beneath. A missing Retrier is
// refused by name. The first Update (gRPC) creates the policy with its rule
// (CreateIfAbsent); the second (REST) finds the rule there and writes
// nothing.
func ExampleNewUpdater() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
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
	for i, build := range []func(context.Context, *interceptor.Retrier) (*iamv2.PoliciesClient, error){
		func(ctx context.Context, r *interceptor.Retrier) (*iamv2.PoliciesClient, error) {
			return interceptor.NewClient(ctx, r, iamv2.NewPoliciesClient, srv.ClientOptions()...)
		},
		func(ctx context.Context, r *interceptor.Retrier) (*iamv2.PoliciesClient, error) {
			return interceptor.NewRESTClient(ctx, r, iamv2.NewPoliciesRESTClient, srv.RESTClientOptions()...)
		},
	} {
		client, err := build(ctx, r)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer client.Close()
		if _, err := deny.NewUpdater(client, nil); i == 0 && err != nil {
			fmt.Println(err)
		}
		u, err := deny.NewUpdater(client, r, deny.CreateIfAbsent())
		if err != nil {
			fmt.Println(err)
			return
		}
		p, err := u.Update(ctx, "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/guardrails",
			deny.AddRule(deny.Rule{
				DeniedPrincipals:  []string{"principalSet://goog/group/contractors@example.com"},
				DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
			}))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("rules:", len(p.GetRules()))
	}
	fmt.Println("UpdatePolicy calls:", srv.CountCalls(iamtest.MethodUpdatePolicy))
	// Output:
	// iamretry/deny: NewUpdater needs the *interceptor.Retrier it runs on; got nil (build one with interceptor.New)
	// rules: 1
	// rules: 1
	// UpdatePolicy calls: 0
}
