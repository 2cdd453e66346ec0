package iamtest_test

import (
	"context"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/googleapis/gax-go/v2"

	"github.com/iamretry/iamretry/iamtest"
)

// noRetry turns a GAPIC client's own retries off for one call, so that a
// test sees each answer of the fake.
var noRetry = gax.WithRetry(nil)

// clients are the two IAM clients the tests call the fake through.
type clients struct {
	admin  *admin.IamClient
	policy *iamapi.IamPolicyClient
}

// newClients builds an admin and an IamPolicy client on srv's ClientOptions,
// closed when the test ends.
func newClients(t *testing.T, srv *iamtest.Server) clients {
	t.Helper()
	ctx := context.Background()
	ac, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ac.Close() })
	pc, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return clients{admin: ac, policy: pc}
}

// createAccount creates the service account id in project p and returns it.
func (c clients) createAccount(t *testing.T, p, id string) *adminpb.ServiceAccount {
	t.Helper()
	sa, err := c.admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
		Name: "projects/" + p, AccountId: id}, noRetry)
	if err != nil {
		t.Fatalf("CreateServiceAccount: %v", err)
	}
	return sa
}

// getAccount reads a service account by email.
func (c clients) getAccount(email string) (*adminpb.ServiceAccount, error) {
	return c.admin.GetServiceAccount(context.Background(), &adminpb.GetServiceAccountRequest{
		Name: "projects/-/serviceAccounts/" + email}, noRetry)
}

// grant runs one read-modify-write through the IamPolicy client: it reads
// resource's policy and writes it back with member added to role, carrying
// the etag it read.
func (c clients) grant(resource, role, member string) error {
	ctx := context.Background()
	p, err := c.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource}, noRetry)
	if err != nil {
		return err
	}
	p.Bindings = append(p.Bindings, &iampb.Binding{Role: role, Members: []string{member}})
	_, err = c.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p}, noRetry)
	return err
}

// members returns the members of role in resource's policy.
func (c clients) members(t *testing.T, resource, role string) []string {
	t.Helper()
	p, err := c.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: resource}, noRetry)
	if err != nil {
		t.Fatalf("GetIamPolicy: %v", err)
	}
	for _, b := range p.Bindings {
		if b.Role == role {
			return b.Members
		}
	}
	return nil
}

// newTestClock is the clock of the tests that check time: the exported
// virtual clock, at a fixed start.
func newTestClock() *iamtest.VirtualClock {
	return iamtest.NewVirtualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// panicMessage runs f and returns the string it panicked with, or "no
// panic" (a control given bad input panics with a message naming it).
func panicMessage(f func()) (msg string) {
	defer func() { msg, _ = recover().(string) }()
	f()
	return "no panic"
}

// inBubble moves the clock of the synctest bubble its caller runs in by d,
// in no real time: a bubble's time.Sleep returns once every other goroutine
// of the bubble is durably blocked. Call it only inside synctest.Test.
func inBubble(d time.Duration) { time.Sleep(d) }
