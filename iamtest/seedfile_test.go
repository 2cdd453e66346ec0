package iamtest_test

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

const seedJSON = `{
  "projects": [{"id": "my-project", "number": 123456789012,
    "policy": {"bindings": [{"role": "roles/viewer", "members": ["user:alice@example.com"]}]}}],
  "folders": [{"name": "folders/42", "policy": {"version": 3, "bindings": [{"role": "roles/browser",
    "members": ["group:ops@example.com"], "condition": {"title": "t", "expression": "request.time < timestamp(\"2030-01-01T00:00:00Z\")"}}]}}],
  "organizations": [{"name": "organizations/7"}],
  "serviceAccounts": [{"project": "my-project", "accountId": "deployer",
    "policy": {"bindings": [{"role": "roles/iam.serviceAccountUser", "members": ["user:alice@example.com"]}]}}],
  "users": ["alice@example.com"],
  "groups": ["ops@example.com"],
  "customRoles": [{"parent": "projects/my-project", "roleId": "deployer", "role": {"title": "Deployer", "includedPermissions": ["iam.roles.get"]}}],
  "denyPolicies": [{"name": "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/no-delete",
    "policy": {"rules": [{"denyRule": {"deniedPrincipals": ["principalSet://goog/public:all"], "deniedPermissions": ["iam.googleapis.com/roles.delete"]}}]}}],
  "policies": {"projects/my-project/serviceAccounts/other@my-project.iam.gserviceaccount.com": null}
}`

// TestLoadSeed: a seed file's objects are what real clients read, and its
// users and groups are the only ones a grant may name.
func TestLoadSeed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	if err := srv.LoadSeed([]byte(seedJSON)); err != nil {
		t.Fatal(err)
	}
	c := newClients(t, srv)
	projects := newProjectsClient(t, srv)
	if m := c.members(t, "projects/123456789012", "roles/viewer"); len(m) != 1 || m[0] != "user:alice@example.com" {
		t.Fatalf("project policy by number: %v", m)
	}
	sa, err := c.getAccount("deployer@my-project.iam.gserviceaccount.com")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name}); err != nil || len(p.InternalProto.GetBindings()) != 1 {
		t.Fatalf("account policy %v, %v", p, err)
	}
	if p, err := c.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/42", Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}); err != nil || p.Bindings[0].Condition == nil {
		t.Fatalf("folder policy %v, %v", p, err)
	}
	if r, err := c.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/my-project/roles/deployer"}); err != nil || r.Title != "Deployer" {
		t.Fatalf("custom role %v, %v", r, err)
	}
	if srv.DenyPolicy("policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/no-delete") == nil {
		t.Fatal("no deny policy")
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 5 {
		t.Fatalf("%d calls logged, want the 5 reads (the seed is no call)", n)
	}

	// Users and groups the seed lists are the ones that exist.
	_, err = projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
	if err != nil {
		t.Fatal(err)
	}
	err = c.grant("projects/my-project", "roles/editor", "user:mallory@example.com")
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "User mallory@example.com does not exist." {
		t.Fatalf("grant to an unlisted user: %v", err)
	}
	if err := c.grant("projects/my-project", "roles/editor", "group:OPS@example.com"); err != nil {
		t.Fatalf("grant to a listed group: %v", err)
	}
	srv.SetKnownPrincipals()
	if err := c.grant("projects/my-project", "roles/editor", "user:mallory@example.com"); err != nil {
		t.Fatalf("grant with the check off: %v", err)
	}
}

// TestLoadSeedErrors: a seed that cannot be stored is refused naming the
// entry and what is wrong.
func TestLoadSeedErrors(t *testing.T) {
	t.Parallel()
	for seed, want := range map[string]string{
		`{"project": []}`:             `unknown field "project"`,
		`{"projects": [{"id": "P"}]}`: `projects[0] (P): invalid project ID "P"`,
		`{"serviceAccounts": [{"project": "p-1", "accountId": "x"}]}`:                                               `serviceAccounts[0] (x): invalid account ID "x"`,
		`{"policies": {"projects/p": {"bindings": [{"role": "roles/Viewer", "members": ["user:a@example.com"]}]}}}`: `policies[projects/p]: `,
		`{"policies": {"projects/p": {"bindingz": []}}}`:                                                            `policies[projects/p]: google.iam.v1.Policy: `,
		`{"folders": [{"name": "projects/1"}]}`:                                                                     `folders[0]: name "projects/1" is not folders/ID`,
		`{"users": ["alice"]}`:                                                                                      `users, groups: member "user:alice" is not user:EMAIL`,
		`{"customRoles": [{"parent": "projects/p", "roleId": "x", "role": {}}]}`:                                    `customRoles[0] (x): `,
		`{"denyPolicies": [{"name": "policies/x", "policy": {}}]}`:                                                  `denyPolicies[0] (policies/x): `,
	} {
		err := iamtest.NewServer(t).LoadSeed([]byte(seed))
		if err == nil || !strings.Contains(err.Error(), "iamtest: LoadSeed: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadSeed(%s) = %v, want an error with %q", seed, err, want)
		}
	}
	if msg := panicMessage(func() { iamtest.NewServer(t).SetKnownPrincipals("serviceAccount:a@b.com") }); !strings.Contains(msg, "SetKnownPrincipals") {
		t.Errorf("SetKnownPrincipals(serviceAccount:...) panicked %q", msg)
	}
}
