package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const checkedFile = `resources:
  - resource: projects/valid-project
    add:
      - role: roles/viewer
        member: "user:a@example.com"
        condition: {title: t, expression: 'request.time < '}
      - {role: roles/viewer, member: "deleted:user:old@example.com?uid=123"}
    remove:
      - {role: roles/viewer, member: "deleted:user:old@example.com?uid=123"}
  - resource: projects/My_Project
    add: [{role: roles/viewer, member: allUsers}]
  - resource: project/my-project
    add: [{role: roles/viewer, member: allUsers}]
  - resource: //pubsub.googleapis.com/projects/my-project/topic/t
    add: [{role: roles/viewer, member: allUsers}]
  - resource: projects/123456789012
    add: [{role: roles/viewer, member: "user:a@example.com"}]
  - resource: projects/example.com:my-project
    add: [{role: roles/viewer, member: "user:a@example.com"}]
  - resource: organisations/123
    add: [{role: roles/viewer, member: allUsers}]
  - resource: projects/abc
    add: [{role: projects/my-project-/roles/r, member: allUsers}]
`

// TestApplyPreCallChecks: before any call, a condition that is not CEL, a
// project that cannot exist, a deleted: member to add and a resource name
// one letter off a known form are each reported as FILE:LINE (with the
// form meant), exit 2, nothing sent; project numbers and domain-scoped
// project IDs pass.
func TestApplyPreCallChecks(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t)
	path := writeTemp(t, "checked.yaml", checkedFile)
	r := applyProc(t, "", append([]string{"apply", "-f", path}, fake.grpcEP()...)...)
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		path + `:6: the condition's expression is not CEL: at 1:16: Syntax error`,
		path + `:7: member "deleted:user:old@example.com?uid=123": a deleted principal cannot be granted`,
		path + `:10: resource "projects/My_Project": "My_Project" cannot be a project: a project ID is 6 to 30`,
		path + `:12: resource "project/my-project": did you mean projects/my-project?`,
		path + `:14: resource "//pubsub.googleapis.com/projects/my-project/topic/t": did you mean //pubsub.googleapis.com/projects/my-project/topics/t?`,
		path + `:20: resource "organisations/123": did you mean organizations/123?`,
		path + `:22: resource "projects/abc": "abc" cannot be a project`,
		path + `:23: role "projects/my-project-/roles/r": "my-project-" cannot be a project`,
		"iamretry apply: 8 errors in " + path,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, line := range []string{":9:", ":16:", ":18:"} {
		if strings.Contains(r.stderr, path+line) {
			t.Errorf("an error at %s, which is valid:\n%s", line, r.stderr)
		}
	}
	if n := fake.stop(t); n != 0 {
		t.Errorf("the server received %d calls; want none", n)
	}
	// The valid forms reach the server.
	fake = startFakeProc(t)
	ok := writeTemp(t, "ok.yaml", `resources:
  - resource: projects/123456789012
    add:
      - role: roles/browser
        member: "user:a@example.com"
        condition: {title: t, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")'}
  - resource: projects/example.com:my-project
    add: [{role: roles/viewer, member: "user:a@example.com"}]
    remove: [{role: roles/viewer, member: "deleted:user:old@example.com?uid=123"}]
`)
	if r := applyProc(t, "", append([]string{"apply", "-f", ok}, fake.grpcEP()...)...); r.code != exitOK {
		t.Errorf("valid forms: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestApplyResourceWait, over both transports: a resource that does not
// exist fails within --resource-wait (60 s by default, not the 300 s
// deadline), named with the server's NOT_FOUND and the flag; 0 fails it at
// once; a dry run's reads are bounded alike.
func TestApplyResourceWait(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			path := writeTemp(t, "gone.yaml", `resources:
  - resource: projects/test-wait/serviceAccounts/nobody@test-wait.iam.gserviceaccount.com
    add: [{role: roles/iam.serviceAccountUser, member: "user:a@example.com"}]
  - resource: projects/test-here
    add: [{role: roles/viewer, member: "user:a@example.com"}]
`)
			const sa = "projects/test-wait/serviceAccounts/nobody@test-wait.iam.gserviceaccount.com"
			args := append([]string{"apply", "-f", path, "--json"}, ep...)
			for _, c := range []struct {
				flags    []string
				want     string
				min, max float64 // attempts
			}{
				// 1+2+4+8+16 s of backoff (plus jitter) fit in 60 s, the next does not.
				{nil, "(the resource did not show up within --resource-wait 60s;", 2, 7},
				{[]string{"--resource-wait", "0"}, "--resource-wait 0s", 1, 1},
				{[]string{"--retry-not-found=false"}, "--resource-wait 0s", 1, 1},
			} {
				r := applyProc(t, "", append(args, c.flags...)...)
				got := byResource(t, r.stdout)
				ev := got[sa]
				msg, _ := ev["error"].(string)
				n, _ := ev["attempts"].(float64)
				if r.code != exitFailure || ev["code"] != "NOT_FOUND" || !strings.Contains(msg, c.want) || n < c.min || n > c.max ||
					got["projects/test-here"]["outcome"] == "failed" {
					t.Errorf("%v: exit %d, %v:\n%s%s", c.flags, r.code, ev, r.stdout, r.stderr)
				}
			}
			dry := applyProc(t, "", append([]string{"apply", "-f", path, "--dry-run", "--detailed-exitcode"}, ep...)...)
			if dry.code != exitFailure || !strings.Contains(dry.stdout, "--resource-wait 60s") {
				t.Errorf("dry run: exit %d:\n%s%s", dry.code, dry.stdout, dry.stderr)
			}
		})
	}
}

// TestApplyMemberWait, over both transports: a grant to a member that
// stays invisible is rerun for --member-wait and then fails with the
// server's INVALID_ARGUMENT, naming the flag; 0 fails it at once.
func TestApplyMemberWait(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t, "--propagation", "1h")
			ep := fake.ep(transport)
			conn, err := grpc.NewClient(fake.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			sa, err := adminpb.NewIAMClient(conn).CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
				Name: "projects/test-pipe", AccountId: "deployer", ServiceAccount: &adminpb.ServiceAccount{DisplayName: "deployer"}})
			if err != nil {
				t.Fatal(err)
			}
			path := writeTemp(t, "sa.yaml", fmt.Sprintf(`resources:
  - resource: projects/test-pipe
    add: [{role: roles/run.invoker, member: "serviceAccount:%s"}]
`, sa.GetEmail()))
			args := append([]string{"apply", "-f", path, "--json"}, ep...)
			for _, c := range []struct {
				flags    []string
				want     string
				min, max float64
			}{
				{[]string{"--member-wait", "0"}, "past --member-wait 0s", 1, 1},
				{[]string{"--retry-not-found=false"}, "past --member-wait 0s", 1, 1},
				// 1+2 s of backoff (plus jitter) fit in 10 s, 1+2+4+8 do not.
				{[]string{"--member-wait", "10s"}, "past --member-wait 10s", 2, 4},
			} {
				r := applyProc(t, "", append(args, c.flags...)...)
				ev := byResource(t, r.stdout)["projects/test-pipe"]
				msg, _ := ev["error"].(string)
				n, _ := ev["attempts"].(float64)
				if r.code != exitFailure || ev["code"] != "INVALID_ARGUMENT" || !strings.Contains(msg, "does not exist") ||
					!strings.Contains(msg, c.want) || n < c.min || n > c.max {
					t.Errorf("%v: exit %d, %v:\n%s%s", c.flags, r.code, ev, r.stdout, r.stderr)
				}
			}
		})
	}
}

// TestClassifyNotExist: IAM's 403 "(or it may not exist)" is waited out as
// a 404 is (--resource-wait); other 403s stay final.
func TestClassifyNotExist(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want string
	}{
		{"Permission 'resourcemanager.projects.getIamPolicy' denied on resource '//cloudresourcemanager.googleapis.com/projects/x' (or it may not exist).", "Propagation"},
		{"The caller does not have permission", "Permanent"},
	} {
		if got := classifyNotExist("", status.Error(codes.PermissionDenied, c.msg)).String(); got != c.want {
			t.Errorf("%q: %s, want %s", c.msg, got, c.want)
		}
	}
}
