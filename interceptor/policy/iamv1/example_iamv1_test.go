package iamv1_test

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/iamv1"
)

// ServiceAccounts adapts the IAM v1 discovery client for a service
// account's own policy (who may act as it): the Updater reads it with
// serviceAccounts.getIamPolicy and writes it with setIamPolicy. The first
// read fails 503 and is retried by the Updater.
func ExampleServiceAccounts() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	clock := iamtest.NewVirtualClock(time.Now()) // no clock in a program
	r, err := interceptor.New(interceptor.WithClock(clock))
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a program: interceptor.NewRESTClient(ctx, r, iam.NewService) with
	// Application Default Credentials.
	s, err := interceptor.NewRESTClient(ctx, r, iam.NewService, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("my-project", "deployer")
	u, err := policy.NewUpdater(iamv1.ServiceAccounts(s), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.FailNext(iamtest.MethodAdminGetIamPolicy, 1, codes.Unavailable)
	var p *iampb.Policy
	// The Updater waits on a goroutine of its own: run it as a thread of the clock.
	clock.Go(ctx, 1, func(ctx context.Context, _ int) {
		p, err = u.Update(ctx, sa.GetName(), policy.AddBinding("roles/iam.serviceAccountUser", "group:ci@example.com"))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Bindings[0].Role, p.Bindings[0].Members)
	fmt.Println("reads:", srv.CountCalls(iamtest.MethodAdminGetIamPolicy), "writes:", srv.CountCalls(iamtest.MethodAdminSetIamPolicy))
	// Output:
	// roles/iam.serviceAccountUser [group:ci@example.com]
	// reads: 2 writes: 1
}
