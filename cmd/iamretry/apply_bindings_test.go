package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
)

// grantsOf lists a policy's grants as "ROLE[ if TITLE] MEMBER", sorted.
func grantsOf(p *iampb.Policy) []string {
	var out []string
	for _, b := range p.GetBindings() {
		role := b.GetRole()
		if b.GetCondition() != nil {
			role += " if " + b.GetCondition().GetTitle()
		}
		for _, m := range b.GetMembers() {
			out = append(out, role+" "+m)
		}
	}
	slices.Sort(out)
	return out
}

// TestApplyBindingsAuthoritative, over both transports: a bindings entry
// leaves its role and condition holding exactly its members (deleted:
// members of the live policy stay), members: [] removes the binding, other
// roles and the same role under another condition are untouched; the plan
// shows it; a rerun writes nothing.
func TestApplyBindingsAuthoritative(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			admin := fake.admin(t)
			sa, err := admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
				Name: "projects/test-bind", AccountId: "gone-soon", ServiceAccount: &adminpb.ServiceAccount{DisplayName: "gone"}})
			if err != nil {
				t.Fatal(err)
			}
			seed := writeTemp(t, "seed.yaml", fmt.Sprintf(`resources:
  - resource: projects/test-bind
    add:
      - {role: roles/run.viewer, member: "user:a@example.com"}
      - {role: roles/run.viewer, member: "user:b@example.com"}
      - {role: roles/run.viewer, member: "serviceAccount:%s"}
      - role: roles/run.viewer
        member: "user:c@example.com"
        condition: {title: c1, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")'}
      - {role: roles/editor, member: "user:e@example.com"}
      - {role: roles/browser, member: "user:f@example.com"}
`, sa.GetEmail()))
			if r := applyProc(t, "", append([]string{"apply", "-f", seed}, ep...)...); r.code != exitOK {
				t.Fatalf("seed: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if _, err := admin.DeleteServiceAccount(context.Background(), &adminpb.DeleteServiceAccountRequest{Name: sa.GetName()}); err != nil {
				t.Fatal(err)
			}
			deleted := ""
			for _, g := range grantsOf(fake.policyOf(t, "projects/test-bind")) {
				if strings.HasPrefix(g, "roles/run.viewer deleted:") {
					deleted = g
				}
			}
			if deleted == "" {
				t.Fatalf("no deleted member after the account's deletion: %v", grantsOf(fake.policyOf(t, "projects/test-bind")))
			}

			path := writeTemp(t, "bind.yaml", `resources:
  - resource: projects/test-bind
    bindings:
      - {role: roles/run.viewer, members: ["user:B@example.com", "user:d@example.com"]}
      - {role: roles/editor, members: []}
    add:
      - {role: roles/browser, member: "user:g@example.com"}
`)
			args := append([]string{"apply", "-f", path}, ep...)
			dry := applyProc(t, "", append(args, "--dry-run", "--detailed-exitcode")...)
			want := "projects/test-bind: would change:\n" +
				"  + roles/browser  user:g@example.com\n" +
				"  - roles/editor  user:e@example.com\n" +
				"  - roles/run.viewer  user:a@example.com\n" +
				"  + roles/run.viewer  user:d@example.com\n"
			if dry.code != exitChangesPending || !strings.Contains(dry.stdout, want) {
				t.Errorf("plan: exit %d, want 3 and\n%s\ngot:\n%s%s", dry.code, want, dry.stdout, dry.stderr)
			}
			if r := applyProc(t, "", append(args, "--json")...); r.code != exitOK {
				t.Fatalf("apply: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			} else if ev := byResource(t, r.stdout)["projects/test-bind"]; ev["added"] != 2.0 || ev["removed"] != 2.0 || ev["writes"] != 1.0 {
				t.Errorf("apply: %v", ev)
			}
			got := grantsOf(fake.policyOf(t, "projects/test-bind"))
			wantGrants := []string{"roles/browser user:f@example.com", "roles/browser user:g@example.com",
				"roles/run.viewer if c1 user:c@example.com", deleted, "roles/run.viewer user:b@example.com", "roles/run.viewer user:d@example.com"}
			slices.Sort(wantGrants)
			// (The fake folds the case of a deleted: member's kind when it
			// stores a write: deleted:serviceaccount:...; IAM keeps it.)
			lower := func(s []string) []string {
				out := make([]string, len(s))
				for i, x := range s {
					out[i] = strings.ToLower(x)
				}
				return out
			}
			if !slices.Equal(lower(got), lower(wantGrants)) {
				t.Errorf("policy:\n got %q\nwant %q", got, wantGrants)
			}
			again := applyProc(t, "", args...)
			if again.code != exitOK || !strings.Contains(again.stdout, "nothing written") {
				t.Errorf("rerun: exit %d:\n%s%s", again.code, again.stdout, again.stderr)
			}
			if r := applyProc(t, "", append(args, "--dry-run", "--detailed-exitcode")...); r.code != exitOK {
				t.Errorf("plan after apply: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestApplyLastOwner, over both transports: taking the last roles/owner
// from a project, by bindings or by remove, fails that resource (exit 1,
// nothing written to it; --dry-run shows it refused) unless
// --allow-owner-removal; other resources converge.
func TestApplyLastOwner(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			const owner = "serviceAccount:root@test-own.iam.gserviceaccount.com"
			seed := writeTemp(t, "seed.yaml", `resources:
  - resource: projects/test-own
    add: [{role: roles/owner, member: "`+owner+`"}, {role: roles/run.viewer, member: "user:v@example.com"}]
  - resource: projects/test-own2
    add: [{role: roles/owner, member: "`+owner+`"}]
`)
			if r := applyProc(t, "", append([]string{"apply", "-f", seed}, ep...)...); r.code != exitOK {
				t.Fatalf("seed: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			path := writeTemp(t, "own.yaml", `resources:
  - resource: projects/test-own
    bindings: [{role: roles/owner, members: []}]
    remove: [{role: roles/run.viewer, member: "user:v@example.com"}]
  - resource: projects/test-own2
    remove: [{role: roles/owner, member: "`+owner+`"}]
  - resource: projects/test-other
    add: [{role: roles/run.viewer, member: "user:v@example.com"}]
`)
			args := append([]string{"apply", "-f", path, "--json"}, ep...)
			for _, extra := range [][]string{{"--dry-run"}, nil} {
				r := applyProc(t, "", append(args, extra...)...)
				got := byResource(t, r.stdout)
				for _, res := range []string{"projects/test-own", "projects/test-own2"} {
					ev := got[res]
					msg, _ := ev["error"].(string)
					if ev["outcome"] != "failed" || ev["code"] != "FAILED_PRECONDITION" || ev["writes"] != 0.0 ||
						!strings.Contains(msg, "the last roles/owner of "+res) || !strings.Contains(msg, "--allow-owner-removal") {
						t.Errorf("%v %s: %v", extra, res, ev)
					}
				}
				if r.code != exitFailure || got["projects/test-other"]["outcome"] == "failed" {
					t.Errorf("%v: exit %d:\n%s%s", extra, r.code, r.stdout, r.stderr)
				}
			}
			if g := grantsOf(fake.policyOf(t, "projects/test-own")); !slices.Contains(g, "roles/run.viewer user:v@example.com") || !slices.Contains(g, "roles/owner "+owner) {
				t.Errorf("a refused resource was written: %v", g)
			}
			r := applyProc(t, "", append(args, "--allow-owner-removal")...)
			if r.code != exitOK {
				t.Fatalf("--allow-owner-removal: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, res := range []string{"projects/test-own", "projects/test-own2"} {
				if g := grantsOf(fake.policyOf(t, res)); len(g) != 0 {
					t.Errorf("%s after --allow-owner-removal: %v", res, g)
				}
			}
		})
	}
}

// TestApplyBindingsFileErrors: a role and condition owned by bindings and
// also under add or remove, a bindings entry given twice, a deleted: or
// repeated member and a missing members list are FILE:LINE errors, exit 2.
func TestApplyBindingsFileErrors(t *testing.T) {
	file := `resources:
  - resource: projects/test-bad
    bindings:
      - {role: roles/run.viewer, members: ["user:a@example.com"]}
      - role: roles/run.viewer
        members: ["user:a@example.com"]
        condition: {title: t, expression: "true"}
      - {role: roles/run.viewer, members: []}
      - {role: roles/editor, members: ["deleted:user:x@example.com?uid=1", "user:b@example.com", "user:B@example.com"]}
      - {role: roles/browser}
    add:
      - {role: roles/run.viewer, member: "user:c@example.com"}
      - {role: roles/run.viewer, member: "user:c@example.com", condition: {title: t, expression: "false"}}
    remove:
      - {role: roles/run.viewer, member: "user:d@example.com", condition: {title: t, expression: "true"}}
  - resource: projects/test-only
    bindings: []
`
	path := writeTemp(t, "bad.yaml", file)
	r := runCmd(t, "apply", "-f", path, "--endpoint", "127.0.0.1:9", "--insecure")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		path + `:8: resource "projects/test-bad": the binding of roles/run.viewer is listed twice in bindings (first at line 4)`,
		path + `:9: member "deleted:user:x@example.com?uid=1": a deleted principal cannot be granted`,
		path + `:9: a binding of resource "projects/test-bad": member user:B@example.com is listed twice (first at line 9)`,
		path + `:10: a binding of resource "projects/test-bad" has no members list`,
		path + `:12: resource "projects/test-bad": roles/run.viewer is owned by the bindings entry at line 4`,
		path + `:15: resource "projects/test-bad": roles/run.viewer (condition "t": true) is owned by the bindings entry at line 5, which sets its members exactly; list user:d@example.com there, not under remove`,
		"6 errors in " + path,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, path+":13:") || strings.Contains(r.stderr, path+":17:") {
		t.Errorf("an error on a valid line:\n%s", r.stderr)
	}
}
