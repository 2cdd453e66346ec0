package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// TestApplyDetailedExitcode, over both transports: --dry-run
// --detailed-exitcode exits 3 while changes are pending (the plan printed
// as a diff per resource, and as change objects with --json), 0 once
// applied, 1 when a resource fails (over 3), 2 for bad input (over all);
// without --dry-run the flag is a usage error.
func TestApplyDetailedExitcode(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			path := writeTemp(t, "plan.yaml", planFile)
			plan := append([]string{"apply", "-f", path, "--dry-run", "--detailed-exitcode"}, ep...)

			r := applyProc(t, "", plan...)
			if r.code != exitChangesPending {
				t.Fatalf("pending: exit %d, want 3:\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{
				"projects/test-plan: would change:\n  + roles/storage.objectViewer (condition \"until-2027\"",
				"  + roles/viewer  user:alice@example.com\n",
				"folders/123: would change:\n  + roles/browser  domain:example.com\n",
			} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("plan lacks %q:\n%s", want, r.stdout)
				}
			}
			j := applyProc(t, "", append(plan, "--json")...)
			ev := byResource(t, j.stdout)["projects/test-plan"]
			changes, _ := ev["changes"].([]any)
			if j.code != exitChangesPending || len(changes) != 2 {
				t.Fatalf("--json: exit %d, projects/test-plan %v", j.code, ev)
			}
			c0 := changes[0].(map[string]any)
			cond, _ := c0["condition"].(map[string]any)
			if c0["op"] != "add" || c0["role"] != "roles/storage.objectViewer" || c0["member"] != "group:readers@example.com" || cond["title"] != "until-2027" {
				t.Errorf("first change: %v", c0)
			}
			if c1 := changes[1].(map[string]any); c1["op"] != "add" || c1["role"] != "roles/viewer" || c1["condition"] != nil {
				t.Errorf("second change: %v", c1)
			}

			if a := applyProc(t, "", append([]string{"apply", "-f", path}, ep...)...); a.code != exitOK {
				t.Fatalf("apply: exit %d:\n%s%s", a.code, a.stdout, a.stderr)
			}
			if r := applyProc(t, "", plan...); r.code != exitOK || !strings.Contains(r.stdout, "projects/test-plan: nothing to do") {
				t.Errorf("after apply: exit %d, want 0:\n%s%s", r.code, r.stdout, r.stderr)
			}

			// A failure outranks pending changes: 1.
			failing := writeTemp(t, "fail.yaml", planFile+`  - resource: projects/test-gone/serviceAccounts/nobody@gone.iam.gserviceaccount.com
    add: [{role: roles/iam.serviceAccountUser, member: "user:a@example.com"}]
  - resource: projects/test-pending
    add: [{role: roles/viewer, member: "user:a@example.com"}]
`)
			f := applyProc(t, "", append([]string{"apply", "-f", failing, "--dry-run", "--detailed-exitcode", "--retry-not-found=false"}, ep...)...)
			if f.code != exitFailure || !strings.Contains(f.stdout, "projects/test-pending: would change") || !strings.Contains(f.stdout, "NOT_FOUND") {
				t.Errorf("failure and pending: exit %d, want 1:\n%s%s", f.code, f.stdout, f.stderr)
			}
		})
	}
	// Bad input outranks everything: 2, nothing sent.
	bad := writeTemp(t, "bad.yaml", badApplyFile)
	if r := runCmd(t, "apply", "-f", bad, "--dry-run", "--detailed-exitcode"); r.code != exitUsage || !strings.Contains(r.stderr, "nothing was sent") {
		t.Errorf("bad file: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	if r := runCmd(t, "apply", "-f", bad, "--detailed-exitcode"); r.code != exitUsage || !strings.Contains(r.stderr, "--detailed-exitcode reports a plan and needs --dry-run") {
		t.Errorf("without --dry-run: exit %d, want 2:\n%s", r.code, r.stderr)
	}
	h := runCmd(t, "apply", "-h")
	for _, want := range []string{"--detailed-exitcode", "Terraform's plan", "pending changes are 3", `"changes"`} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("apply -h lacks %q", want)
		}
	}
}

// TestApplyDetailedExitcodeSignal: a signal during a plan ends it with 130
// (SIGINT) or 143 (SIGTERM), whatever the plan found so far. The folder is
// planned; the projects' reads meet an outage retried with no deadline, so
// the plan cannot end before the signal, however late it comes.
func TestApplyDetailedExitcodeSignal(t *testing.T) {
	t.Parallel() // its own fake and files
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			fake := startFakeIn(t, nil)
			fake.srv.SetOutage(iamtest.MethodProjectsGetIamPolicy, grpccodes.Unavailable)
			var b strings.Builder
			b.WriteString("resources:\n  - {resource: folders/101, add: [{role: roles/viewer, member: \"user:a@example.com\"}]}\n")
			for i := range 3 {
				fmt.Fprintf(&b, "  - {resource: projects/test-d%d, add: [{role: roles/viewer, member: \"user:a@example.com\"}]}\n", i)
			}
			path := writeTemp(t, "sig.yaml", b.String())
			cmd := exec.Command(builtBinary(t), append([]string{"apply", "-f", path, "--dry-run", "--detailed-exitcode", "--parallel", "1", "--deadline", "0"}, fake.grpcEP()...)...)
			out := &syncBuffer{}
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = out, &errb
			dieWithTest(cmd)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			if _, ok := out.waitLine("folders/101: would change", done); !ok {
				cmd.Process.Kill()
				<-done
				t.Fatalf("no plan:\n%s%s", out.String(), errb.String())
			}
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("apply did not end after %v", sig)
			}
			if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) {
				t.Errorf("exit %d after %v, want %d:\n%s%s", code, sig, 128+int(sig), out.String(), errb.String())
			}
		})
	}
}
