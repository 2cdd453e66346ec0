package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
)

// TestExportRoundTrip, over both transports: export writes every role and
// condition of the live policies as authoritative bindings, without
// deleted: members; apply of the export straight away writes nothing (its
// plan exits 0); after a change made out of band, apply of the export puts
// the policy back.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			admin := fake.admin(t)
			sa, err := admin.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
				Name: "projects/test-exp", AccountId: "gone-soon", ServiceAccount: &adminpb.ServiceAccount{DisplayName: "gone"}})
			if err != nil {
				t.Fatal(err)
			}
			seed := writeTemp(t, "seed.yaml", fmt.Sprintf(`resources:
  - resource: projects/test-exp
    add:
      - {role: roles/run.viewer, member: "user:Zed@example.com"}
      - {role: roles/run.viewer, member: "group:a@example.com"}
      - {role: roles/run.viewer, member: "serviceAccount:%s"}
      - role: roles/run.viewer
        member: "user:c@example.com"
        condition: {title: "c1: until 2027", expression: 'request.time < timestamp("2027-01-01T00:00:00Z")', description: "# not a comment"}
      - {role: roles/logging.viewer, member: "serviceAccount:%s"}
  - resource: folders/12345
    add: [{role: roles/browser, member: "domain:example.com"}]
`, sa.GetEmail(), sa.GetEmail()))
			if r := applyProc(t, "", append([]string{"apply", "-f", seed}, ep...)...); r.code != exitOK {
				t.Fatalf("seed: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if _, err := admin.DeleteServiceAccount(context.Background(), &adminpb.DeleteServiceAccountRequest{Name: sa.GetName()}); err != nil {
				t.Fatal(err)
			}
			out := writeTemp(t, "exported.yaml", "")
			exp := applyProc(t, "", append([]string{"export", "--resource", "projects/test-exp", "--resource", "folders/12345", "-f", out}, ep...)...)
			if exp.code != exitOK || !strings.Contains(exp.stderr, "wrote "+out+" (2 resources, 0 roles)") {
				t.Fatalf("export: exit %d:\n%s%s", exp.code, exp.stdout, exp.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			for _, want := range []string{
				"- resource: projects/test-exp\n    bindings:\n      - role: roles/run.viewer\n        members: ['group:a@example.com', 'user:zed@example.com']\n      - role: roles/run.viewer\n        members: ['user:c@example.com']\n        condition:\n          title: 'c1: until 2027'\n",
				"- resource: folders/12345\n    bindings:\n      - role: roles/browser\n        members: ['domain:example.com']\n",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("export lacks %q:\n%s", want, text)
				}
			}
			if strings.Contains(text, "deleted:") || strings.Contains(text, "logging.viewer") {
				t.Errorf("export holds deleted members:\n%s", text)
			}
			stdout := applyProc(t, "", append([]string{"export", "--resource", "projects/test-exp", "--resource", "folders/12345"}, ep...)...)
			if stdout.code != exitOK || stdout.stdout != text {
				t.Errorf("export to stdout: exit %d, differs from -f:\n%s", stdout.code, stdout.stdout)
			}

			plan := append([]string{"apply", "-f", out, "--dry-run", "--detailed-exitcode"}, ep...)
			if r := applyProc(t, "", plan...); r.code != exitOK {
				t.Errorf("plan of the export: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := applyProc(t, "", append([]string{"apply", "-f", out, "--json"}, ep...)...); r.code != exitOK || applySummaryOf(t, r.stdout)["writes"] != 0.0 {
				t.Errorf("apply of the export: exit %d, want no write:\n%s%s", r.code, r.stdout, r.stderr)
			}
			drift := writeTemp(t, "drift.yaml", `resources:
  - resource: projects/test-exp
    add: [{role: roles/run.viewer, member: "user:intruder@example.com"}, {role: roles/editor, member: "user:intruder@example.com"}]
`)
			if r := applyProc(t, "", append([]string{"apply", "-f", drift}, ep...)...); r.code != exitOK {
				t.Fatalf("drift: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			r := applyProc(t, "", plan...)
			if r.code != exitChangesPending || !strings.Contains(r.stdout, "  - roles/run.viewer  user:intruder@example.com\n") {
				t.Errorf("plan after drift: exit %d, want 3:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "roles/editor") {
				t.Errorf("the export owns a role it did not see:\n%s", r.stdout)
			}
		})
	}
}

// TestExportFailsWritesNothing: a resource that cannot be read fails the
// export (exit 1, the server's error named, no file); bad flags exit 2.
func TestExportFailsWritesNothing(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t)
	out := t.TempDir() + "/out.yaml"
	r := applyProc(t, "", append([]string{"export", "--resource", "projects/test-ok", "--resource",
		"projects/test-x/serviceAccounts/nobody@test-x.iam.gserviceaccount.com", "-f", out}, fake.grpcEP()...)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, "FAILED projects/test-x/serviceAccounts/nobody@test-x.iam.gserviceaccount.com: NOT_FOUND") ||
		!strings.Contains(r.stderr, "--resource-wait 60s") || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed export wrote %s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export"}, "give at least one --resource"},
		{[]string{"export", "--resource", "project/test-p"}, "did you mean projects/test-p?"},
		{[]string{"export", "--resource", "projects/abc"}, `"abc" cannot be a project`},
		{[]string{"export", "--resource", "projects/test-p", "--resource", "projects/test-p"}, "given twice"},
		{[]string{"export", "--resource", "projects/test-p", "--insecure"}, "--insecure turns off TLS"},
	} {
		if r := runCmd(t, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	h := runCmd(t, "export", "-h")
	for _, want := range []string{"--resource", "authoritative", "apply -h", "writes nothing"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("export -h lacks %q:\n%s", want, h.stdout)
		}
	}
}

// TestExportRoles, over both transports: export --role writes the role's
// fields and its permissions as an authoritative list; apply of it writes
// nothing, and after a permission is added out of band, apply of the
// export takes it away.
func TestExportRoles(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			const name = "projects/test-exr/roles/deployer"
			seed := writeTemp(t, "seed.yaml", `roles:
  - role: `+name+`
    title: Deployer
    description: "deploys: run services"
    stage: GA
    create_if_absent: true
    add_permissions: [run.services.update, run.services.get]
`)
			if r := applyProc(t, "", append([]string{"apply", "-f", seed}, ep...)...); r.code != exitOK {
				t.Fatalf("seed: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			out := writeTemp(t, "roles.yaml", "")
			if r := applyProc(t, "", append([]string{"export", "--role", name, "-f", out}, ep...)...); r.code != exitOK {
				t.Fatalf("export: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			data, _ := os.ReadFile(out)
			want := "roles:\n  - role: " + name + "\n    title: Deployer\n    description: 'deploys: run services'\n    stage: GA\n    permissions:\n      - run.services.get\n      - run.services.update\n"
			if !strings.Contains(string(data), want) {
				t.Errorf("export lacks %q:\n%s", want, data)
			}
			plan := append([]string{"apply", "-f", out, "--dry-run", "--detailed-exitcode"}, ep...)
			if r := applyProc(t, "", plan...); r.code != exitOK {
				t.Errorf("plan of the export: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
			}
			drift := writeTemp(t, "drift.yaml", "roles:\n  - role: "+name+"\n    add_permissions: [run.services.delete]\n")
			if r := applyProc(t, "", append([]string{"apply", "-f", drift}, ep...)...); r.code != exitOK {
				t.Fatalf("drift: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := applyProc(t, "", plan...); r.code != exitChangesPending || !strings.Contains(r.stdout, "  - run.services.delete\n") {
				t.Errorf("plan after drift: exit %d, want 3:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := applyProc(t, "", append([]string{"apply", "-f", out}, ep...)...); r.code != exitOK {
				t.Errorf("apply of the export: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := applyProc(t, "", plan...); r.code != exitOK {
				t.Errorf("plan after the export's apply: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
