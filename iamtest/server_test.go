package iamtest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// TestClientOptionsServeTheThreeClients points the admin, IamPolicy and
// resourcemanager Projects clients at one fake as they are, and sees one
// policy store behind them.
func TestClientOptionsServeTheThreeClients(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()

	sa := c.createAccount(t, "p1", "robot-one")
	if sa.Email != "robot-one@p1.iam.gserviceaccount.com" {
		t.Fatalf("created %q", sa.Email)
	}
	if err := c.grant("projects/p1", "roles/viewer", "user:alice@example.com"); err != nil {
		t.Fatal(err)
	}
	projects, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer projects.Close()
	p, err := projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Bindings) != 1 || !slices.Equal(p.Bindings[0].Members, []string{"user:alice@example.com"}) {
		t.Fatalf("projects client read %v", p.Bindings)
	}
	if got := srv.CountCalls(iamtest.MethodProjectsGetIamPolicy); got != 1 {
		t.Fatalf("CountCalls(Projects GetIamPolicy) = %d, want 1", got)
	}
}

// TestConnServesGeneratedStubs calls the fake through a generated stub on
// Conn.
func TestConnServesGeneratedStubs(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	stub := iampb.NewIAMPolicyClient(srv.Conn())
	p, err := stub.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Etag == nil || len(p.Bindings) != 0 {
		t.Fatalf("empty policy = %v", p)
	}
}

// TestCloseEndsCalls checks that Close may run twice and that calls made
// after it fail UNAVAILABLE.
func TestCloseEndsCalls(t *testing.T) {
	t.Parallel()
	srv, err := iamtest.New()
	if err != nil {
		t.Fatal(err)
	}
	c := newClients(t, srv)
	srv.Close()
	srv.Close()
	if err := c.grant("projects/p", "roles/viewer", "user:a@example.com"); status.Code(err) != codes.Unavailable {
		t.Fatalf("call after Close: %v, want UNAVAILABLE", err)
	}
}

// TestNewRefusesInvalidOptions checks that New names what it refuses.
func TestNewRefusesInvalidOptions(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		opt  iamtest.Option
		want string
	}{
		"nil clock":  {iamtest.WithClock(nil), "WithClock(nil)"},
		"nil option": {nil, "option 0 is nil"},
	} {
		t.Run(name, func(t *testing.T) {
			srv, err := iamtest.New(tc.opt)
			if err == nil {
				srv.Close()
				t.Fatal("New accepted it")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}
