package iamtest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// The deny face: IAM v2 deny policies through iam/apiv2's PoliciesClient
// (NewPoliciesRESTClient with RESTClientOptions works the same). Writes are
// long-running operations; with SetDenyOperationDelay they complete on the
// fake's clock, which a VirtualClock moves in no real time, so op.Wait
// returns at its first poll. A write carrying a stale etag fails ABORTED.
func Example_denyPolicies() {
	ctx := context.Background()
	clock := iamtest.NewVirtualClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client, err := iamv2.NewPoliciesClient(ctx, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	parent := "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies"
	srv.SetDenyOperationDelay(30 * time.Second)
	op, err := client.CreatePolicy(ctx, &iamv2pb.CreatePolicyRequest{
		Parent: parent, PolicyId: "no-role-deletion",
		Policy: &iamv2pb.Policy{Rules: []*iamv2pb.PolicyRule{{Kind: &iamv2pb.PolicyRule_DenyRule{DenyRule: &iamv2pb.DenyRule{
			DeniedPrincipals:  []string{"principalSet://goog/group/contractors@example.com"},
			DeniedPermissions: []string{"iam.googleapis.com/roles.delete"},
		}}}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("done at once:", op.Done())
	clock.Advance(30 * time.Second)
	p, err := op.Wait(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", p.GetName()) // the project by number, as IAM answers it

	srv.SetDenyOperationDelay(0)
	update := func(p *iamv2pb.Policy) error {
		op, err := client.UpdatePolicy(ctx, &iamv2pb.UpdatePolicyRequest{Policy: p})
		if err != nil {
			return err
		}
		_, err = op.Wait(ctx)
		return err
	}
	p.DisplayName = "guardrails"
	fmt.Println("update with the etag read:", update(p))
	fmt.Println("again with that etag:", status.Code(update(p)) == codes.Aborted)
	fmt.Println("stored:", srv.DenyPolicy(p.GetName()).GetDisplayName())
	// Output:
	// done at once: false
	// created: policies/cloudresourcemanager.googleapis.com%2Fprojects%2F642627587659/denypolicies/no-role-deletion
	// update with the etag read: <nil>
	// again with that etag: true
	// stored: guardrails
}
