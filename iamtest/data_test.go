package iamtest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// newProjectsClient builds a Resource Manager Projects client on srv's
// ClientOptions, closed when the test ends.
func newProjectsClient(t *testing.T, srv *iamtest.Server) *resourcemanager.ProjectsClient {
	t.Helper()
	pc, err := resourcemanager.NewProjectsClient(context.Background(), srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return pc
}

func TestSeedPolicyIsWhatClientsRead(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	projects := newProjectsClient(t, srv)
	stored := srv.SeedPolicy("projects/p", &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:Alice@Example.com", "user:alice@example.com"}},
		{Role: "roles/editor"}, // no members: dropped
	}})
	if len(stored.Bindings) != 1 || !slices.Equal(stored.Bindings[0].Members, []string{"user:alice@example.com"}) ||
		stored.Version != 1 || len(stored.Etag) == 0 {
		t.Fatalf("stored %v, want IAM's form", stored)
	}
	got, err := projects.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
	if err != nil || string(got.Etag) != string(stored.Etag) || !slices.Equal(got.Bindings[0].Members, stored.Bindings[0].Members) {
		t.Fatalf("read %v, %v; seeded %v", got, err, stored)
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 1 {
		t.Fatalf("%d calls logged, want the read only", n)
	}
	if got := srv.Policy("projects/p"); string(got.Etag) != string(stored.Etag) {
		t.Fatalf("Policy = %v, want %v", got, stored)
	}
	// The seeded etag is the current one: a read-modify-write goes through.
	if err := c.grant("projects/p", "roles/editor", "user:bob@example.com"); err != nil {
		t.Fatal(err)
	}

	// An etag of the test's own is kept; nil removes the policy.
	srv.SeedPolicy("folders/1", &iampb.Policy{Etag: []byte("BwX1"), Bindings: viewer("user:a@example.com").Bindings})
	if got, _ := c.getPolicy("folders/1", 3); string(got.Etag) != "BwX1" {
		t.Fatalf("etag %q, want BwX1", got.Etag)
	}
	srv.SeedPolicy("folders/1", nil)
	if got := srv.Policy("folders/1"); len(got.Bindings) != 0 || got.Version != 0 || string(got.Etag) != "\x00\x20\x01" {
		t.Fatalf("after removal %v, want the empty policy", got)
	}
}

func TestSeedPolicyRefusesWhatIAMRefuses(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	for _, tc := range []struct {
		resource string
		p        *iampb.Policy
		want     string
	}{
		{"folders/1", viewer("alice@example.com"), `"alice@example.com"`},
		{"folders/1", &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/Viewer", Members: []string{"user:a@example.com"}}}}, `"roles/Viewer"`},
		{"folders/1", &iampb.Policy{Version: 1, Bindings: []*iampb.Binding{{Role: "roles/browser", Members: []string{"user:a@example.com"},
			Condition: condition()}}}, "version 3"},
	} {
		msg := panicMessage(func() { srv.SeedPolicy(tc.resource, tc.p) })
		if !strings.HasPrefix(msg, "iamtest: SeedPolicy: ") || !strings.Contains(msg, tc.want) {
			t.Errorf("panic %q does not name %s", msg, tc.want)
		}
	}
	srv.RegisterProject("my-project", 42)
	msg := panicMessage(func() { srv.SeedPolicy("projects/other-project", viewer("user:a@example.com")) })
	if !strings.Contains(msg, "projects/other-project is not registered") {
		t.Errorf("panic %q", msg)
	}
}

func TestSeedServiceAccountIsVisibleAtOnce(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))
	c := newClients(t, srv)
	srv.SetPropagationDelay(time.Minute)
	srv.SetPropagationReads(5)
	sa := srv.SeedServiceAccount("p", "seeded-robot")
	if sa.Email != "seeded-robot@p.iam.gserviceaccount.com" || sa.Name != "projects/p/serviceAccounts/"+sa.Email || sa.UniqueId == "" {
		t.Fatalf("seeded %v", sa)
	}
	got, err := c.getAccount(sa.Email)
	if err != nil || got.UniqueId != sa.UniqueId {
		t.Fatalf("GetServiceAccount = %v, %v", got, err)
	}
	if _, err := c.admin.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: sa.Name}); err != nil {
		t.Fatalf("the seeded account's policy: %v", err)
	}
	// A created one still propagates.
	created := c.createAccount(t, "p", "created-robot")
	_, err = c.getAccount(created.Email)
	wantStatus(t, err, codes.NotFound, "")
	if got := srv.ServiceAccount(created.Email); got == nil || got.UniqueId != created.UniqueId {
		t.Fatalf("ServiceAccount sees past propagation: %v", got)
	}
	if srv.ServiceAccount("nobody@p.iam.gserviceaccount.com") != nil || srv.ServiceAccountKeys("nobody@p.iam.gserviceaccount.com") != nil {
		t.Fatal("an unknown account is not nil")
	}
	msg := panicMessage(func() { srv.SeedServiceAccount("p", "seeded-robot") })
	if msg != "iamtest: SeedServiceAccount: service account seeded-robot@p.iam.gserviceaccount.com already exists" {
		t.Errorf("panic %q", msg)
	}
}

func TestServiceAccountKeysCountsMintedKeys(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := srv.SeedServiceAccount("p", "key-robot")
	for range 10 {
		if _, err := c.admin.CreateServiceAccountKey(context.Background(), &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.admin.CreateServiceAccountKey(context.Background(), &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name}, noRetry)
	wantStatus(t, err, codes.FailedPrecondition, "Precondition check failed.")
	keys := srv.ServiceAccountKeys(sa.Name)
	if len(keys) != 10 || !strings.HasPrefix(keys[0].Name, sa.Name+"/keys/") {
		t.Fatalf("%d keys, first %v", len(keys), keys[0])
	}
}
