package iamv1_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/genproto/googleapis/type/expr"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/iamv1"
)

// TestConditionalPolicyOverREST: a service account's policy with a
// condition is read over REST at version 3 (serviceAccounts.getIamPolicy
// has no body: its version is the query parameter
// options.requestedPolicyVersion), by the discovery client and by the
// Updater on it, which keeps the conditional binding.
func TestConditionalPolicyOverREST(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	s, err := interceptor.NewRESTClient(ctx, r, iam.NewService, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	sa := srv.SeedServiceAccount("my-project", "deployer")
	cond := &expr.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`}
	srv.SeedPolicy(sa.GetName(), &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{
		{Role: "roles/iam.serviceAccountUser", Members: []string{"user:alice@example.com"}, Condition: cond},
	}})

	p, err := s.Projects.ServiceAccounts.GetIamPolicy(sa.GetName()).OptionsRequestedPolicyVersion(3).Context(ctx).Do()
	if err != nil {
		t.Fatalf("getIamPolicy at version 3: %v", err)
	}
	if p.Version != 3 || len(p.Bindings) != 1 || p.Bindings[0].Condition == nil || p.Bindings[0].Condition.Title != "until 2030" {
		t.Fatalf("read %+v, want the conditional binding at version 3", p)
	}

	u, err := policy.NewUpdater(iamv1.ServiceAccounts(s), r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := u.Update(ctx, sa.GetName(), policy.AddBinding("roles/iam.serviceAccountTokenCreator", "group:ci@example.com"))
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got.GetVersion() != 3 || len(got.GetBindings()) != 2 {
		t.Fatalf("after Update: %v, want both bindings at version 3", got)
	}
	stored := srv.Policy(sa.GetName())
	if len(stored.GetBindings()) != 2 || stored.GetVersion() != 3 {
		t.Fatalf("stored %v, want the conditional binding kept", stored)
	}
}
