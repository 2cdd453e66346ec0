package crmv3_test

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"

	crm "google.golang.org/api/cloudresourcemanager/v3"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/crmv3"
)

// Projects adapts the Resource Manager v3 discovery client: an Updater
// changes a project's policy through projects.getIamPolicy and
// projects.setIamPolicy. A concurrent change makes the first write fail
// (ABORTED, HTTP 409): the whole read-modify-write reruns from a fresh read.
// Folders and Organizations work the same way on "folders/ID" and
// "organizations/ID".
func ExampleProjects() {
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
	// In a program: interceptor.NewRESTClient(ctx, r, crm.NewService) with
	// Application Default Credentials.
	s, err := interceptor.NewRESTClient(ctx, r, crm.NewService, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(crmv3.Projects(s), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.ConcurrentWriteNext(iamtest.MethodProjectsSetIamPolicy, 1)
	var p *iampb.Policy
	// The Updater waits on a goroutine of its own: run it as a thread of the clock.
	clock.Go(ctx, 1, func(ctx context.Context, _ int) {
		p, err = u.Update(ctx, "projects/my-project", policy.AddBinding("roles/viewer", "user:alice@example.com"))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Bindings[0].Role, p.Bindings[0].Members)
	fmt.Println("reads:", srv.CountCalls(iamtest.MethodProjectsGetIamPolicy), "writes:", srv.CountCalls(iamtest.MethodProjectsSetIamPolicy))
	// Output:
	// roles/viewer [user:alice@example.com]
	// reads: 2 writes: 2
}
