package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iampb2 "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const rolesDenyFile = `roles:
  - role: projects/test-roles/roles/deployer
    title: Deployer
    create_if_absent: true
    add_permissions: [run.services.update, run.services.get]
    remove_permissions: [run.services.delete]
deny:
  - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-roles/denypolicies/no-key-creation
    create_if_absent: true
    add_rules:
      - denied_principals: [principalSet://goog/public:all]
        exception_principals: [principalSet://goog/group/admins@example.com]
        denied_permissions: [iam.googleapis.com/serviceAccountKeys.create]
  - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-roles/denypolicies/second
    create_if_absent: true
    add_rules:
      - denied_principals: [principal://goog/subject/bob@example.com]
        denied_permissions: [iam.googleapis.com/roles.delete]
  - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-roles/denypolicies/untouched
    add_rules: []
resources:
  - resource: projects/test-roles
    add: [{role: projects/test-roles/roles/deployer, member: "user:a@example.com"}]
`

const denyName = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-roles/denypolicies/no-key-creation"

// TestApplyRolesAndDeny, over both transports: roles: and deny: go through
// the library's role and deny Updaters: the plan shows what would change
// (exit 3), apply creates the role and the deny policies, a rerun writes
// nothing, removals land, and a deleted role is refused naming gcloud's
// undelete.
func TestApplyRolesAndDeny(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			conn, err := grpc.NewClient(fake.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			admin := adminpb.NewIAMClient(conn)
			denyOf := func() []*iampb2.PolicyRule {
				p, err := iampb2.NewPoliciesClient(conn).GetPolicy(context.Background(), &iampb2.GetPolicyRequest{Name: denyName})
				if err != nil {
					t.Fatalf("GetPolicy: %v", err)
				}
				return p.GetRules()
			}

			path := writeTemp(t, "rd.yaml", rolesDenyFile)
			args := append([]string{"apply", "-f", path}, ep...)
			dry := applyProc(t, "", append(args, "--dry-run", "--detailed-exitcode")...)
			for _, want := range []string{
				"projects/test-roles/roles/deployer: would change:\n  + create projects/test-roles/roles/deployer\n  ~ title: \"\" -> \"Deployer\"\n  + run.services.get\n  + run.services.update\n",
				denyName + ": would change:\n  + create " + denyName + "\n  + rule deny principalSet://goog/public:all iam.googleapis.com/serviceAccountKeys.create except principalSet://goog/group/admins@example.com\n",
				"denypolicies/untouched: nothing to do",
			} {
				if !strings.Contains(dry.stdout, want) {
					t.Errorf("plan lacks %q:\n%s%s", want, dry.stdout, dry.stderr)
				}
			}
			if dry.code != exitChangesPending {
				t.Errorf("plan: exit %d, want 3", dry.code)
			}

			r := applyProc(t, "", append(args, "--json")...)
			got := byResource(t, r.stdout)
			if r.code != exitOK || got["projects/test-roles/roles/deployer"]["outcome"] != "changed" || got[denyName]["outcome"] != "changed" ||
				got["policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-roles/denypolicies/untouched"]["outcome"] != "unchanged" {
				t.Fatalf("apply: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			ro, err := admin.GetRole(context.Background(), &adminpb.GetRoleRequest{Name: "projects/test-roles/roles/deployer"})
			if err != nil {
				t.Fatal(err)
			}
			if perms := slices.Sorted(slices.Values(ro.GetIncludedPermissions())); ro.GetTitle() != "Deployer" || !slices.Equal(perms, []string{"run.services.get", "run.services.update"}) {
				t.Errorf("role: %v", ro)
			}
			if rules := denyOf(); len(rules) != 1 || rules[0].GetDenyRule().GetDeniedPermissions()[0] != "iam.googleapis.com/serviceAccountKeys.create" {
				t.Errorf("deny rules: %v", rules)
			}
			again := applyProc(t, "", append(args, "--json")...)
			if s := applySummaryOf(t, again.stdout); again.code != exitOK || s["writes"] != 0.0 || s["changed"] != 0.0 {
				t.Errorf("rerun: exit %d:\n%s%s", again.code, again.stdout, again.stderr)
			}
			if r := applyProc(t, "", append(args, "--dry-run", "--detailed-exitcode")...); r.code != exitOK {
				t.Errorf("plan after apply: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}

			undo := writeTemp(t, "undo.yaml", `roles:
  - role: projects/test-roles/roles/deployer
    remove_permissions: [run.services.get]
deny:
  - policy: `+denyName+`
    remove_rules:
      - denied_principals: [principalSet://goog/public:all]
        exception_principals: [principalSet://goog/group/admins@example.com]
        denied_permissions: [iam.googleapis.com/serviceAccountKeys.create]
`)
			if r := applyProc(t, "", append([]string{"apply", "-f", undo}, ep...)...); r.code != exitOK ||
				!strings.Contains(r.stdout, "projects/test-roles/roles/deployer: changed (1 attempt, 1 write, ") {
				t.Fatalf("undo: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			ro, _ = admin.GetRole(context.Background(), &adminpb.GetRoleRequest{Name: "projects/test-roles/roles/deployer"})
			if slices.Contains(ro.GetIncludedPermissions(), "run.services.get") || len(denyOf()) != 0 {
				t.Errorf("undo did not land: role %v, deny %v", ro, denyOf())
			}

			if _, err := admin.DeleteRole(context.Background(), &adminpb.DeleteRoleRequest{Name: "projects/test-roles/roles/deployer"}); err != nil {
				t.Fatal(err)
			}
			for _, extra := range [][]string{nil, {"--dry-run"}} {
				del := applyProc(t, "", append(append([]string{"apply", "-f", undo, "--json"}, ep...), extra...)...)
				ev := byResource(t, del.stdout)["projects/test-roles/roles/deployer"]
				msg, _ := ev["error"].(string)
				if del.code != exitFailure || ev["outcome"] != "failed" || !strings.Contains(msg, "gcloud iam roles undelete deployer --project test-roles") {
					t.Errorf("deleted role %v: exit %d, %v", extra, del.code, ev)
				}
			}
		})
	}
}

// TestApplyRolesDenyFileErrors: the roles and deny lists are checked before
// any call, permissions and principals by the library's tables, as
// FILE:LINE with exit 2.
func TestApplyRolesDenyFileErrors(t *testing.T) {
	path := writeTemp(t, "bad.yaml", `roles:
  - role: roles/viewer
    add_permissions: [a.b.c]
  - role: projects/test-r/roles/x
    stage: SHINY
    permissions: [a.b.c]
    add_permissions: [d.e.f]
  - role: projects/test-r/roles/y
deny:
  - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-r/denypolicies/p
    add_rules:
      - denied_principals: ["user:bob@example.com"]
        denied_permissions: [iam.googleapis.com/roles.delete]
      - denied_principals: [principalSet://goog/public:all]
        denied_permissions: [roles.delete]
  - policy: projects/test-r/denypolicies/p
    add_rules: []
`)
	r := runCmd(t, "apply", "-f", path, "--endpoint", "127.0.0.1:9", "--insecure")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		path + `:2: role "roles/viewer": predefined roles`,
		path + `:4: role "projects/test-r/roles/x": permissions sets the role's permissions exactly`,
		path + `:5: role "projects/test-r/roles/x": stage "SHINY": want one of`,
		path + `:8: role "projects/test-r/roles/y" has nothing to change`,
		path + `:12: deny policy "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Ftest-r/denypolicies/p": `,
		"user:bob@example.com",
		path + `:14: deny policy`,
		"roles.delete",
		path + `:16: deny policy "projects/test-r/denypolicies/p": a deny policy is policies/ATTACHMENT_POINT/denypolicies/ID`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	h := runCmd(t, "apply", "-h")
	for _, want := range []string{"bindings:", "members: [", "roles:", "add_permissions", "remove_permissions", "permissions: [...]", "deny:",
		"add_rules", "remove_rules", "denied_principals", "exception_principals", "denied_permissions", "exception_permissions",
		"denial_condition", "create_if_absent", "--allow-owner-removal", "--resource-wait", "--member-wait", "gcloud iam roles undelete"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("apply -h lacks %q", want)
		}
	}
}
