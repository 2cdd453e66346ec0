package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/iamtest"
)

// startFake runs "iamretry fake-server" in-process on a free loopback port,
// the way a user does, and returns its address. The server stops, and the
// command must exit 0, when the test ends.
func startFake(t *testing.T, flags ...string) string {
	t.Helper()
	addr, _ := startFakeOut(t, flags...)
	return addr
}

// startFakeOut is startFake that also returns what the command printed.
func startFakeOut(t *testing.T, flags ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	var errb bytes.Buffer
	done := make(chan struct{})
	var code int
	go func() {
		defer close(done)
		code = run(ctx, append([]string{"fake-server", "--listen", "127.0.0.1:0"}, flags...), out, &errb)
	}()
	addr, ok := out.waitLine("fake IAM server listening on ", done)
	if ok {
		// The banner is written line by line while the server already
		// serves: read it whole before looking into it.
		_, ok = out.waitLine("Stop with Ctrl-C.", done)
	}
	if !ok {
		cancel()
		<-done
		t.Fatalf("fake-server did not start (exit %d):\n%s\n%s", code, out.String(), errb.String())
	}
	t.Cleanup(func() {
		cancel()
		<-done
		if code != exitOK {
			t.Errorf("fake-server exited %d on SIGINT-like cancel: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), "fake IAM server stopped") {
			t.Errorf("fake-server did not say it stopped:\n%s", out.String())
		}
	})
	// The hints follow the address: read them once the banner has ended.
	if _, ok := out.waitLine("Stop with Ctrl-C.", done); !ok {
		t.Fatalf("fake-server's banner did not end:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "--endpoint "+addr+" --insecure") || !strings.Contains(out.String(), `option.WithEndpoint("`+addr+`")`) {
		t.Errorf("fake-server does not say how to point a client at it:\n%s", out.String())
	}
	return addr, out
}

func TestPolicyAgainstFakeServer(t *testing.T) {
	addr := startFake(t)
	ep := []string{"--endpoint", addr, "--insecure"}
	for _, res := range []string{
		"projects/demo",     // Resource Manager Projects
		"folders/123",       // Resource Manager Folders
		"organizations/456", // Resource Manager Organizations
		"//pubsub.googleapis.com/projects/demo/topics/orders", // google.iam.v1.IAMPolicy
	} {
		t.Run(strings.ReplaceAll(res, "/", "_"), func(t *testing.T) {
			r := runCmd(t, append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:Alice@example.com"}, ep...)...)
			if r.code != exitOK {
				t.Fatalf("add-binding exited %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "grant roles/viewer to user:Alice@example.com: done") || !strings.Contains(r.stdout, "    user:alice@example.com") {
				t.Errorf("add-binding printed:\n%s", r.stdout)
			}
			g := runCmd(t, append([]string{"policy", "get", "--resource", res}, ep...)...)
			if g.code != exitOK {
				t.Fatalf("get exited %d: %s", g.code, g.stderr)
			}
			want := "policy of " + res + " (version 1, etag "
			if !strings.HasPrefix(g.stdout, want) || !strings.Contains(g.stdout, "  roles/viewer\n    user:alice@example.com\n") {
				t.Errorf("get printed:\n%s", g.stdout)
			}
			// Adding it again changes nothing and writes nothing.
			again := runCmd(t, append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:alice@example.com"}, ep...)...)
			if again.code != exitOK || strings.Count(again.stdout, "user:alice@example.com\n") != 1 {
				t.Errorf("add-binding again exited %d:\n%s", again.code, again.stdout)
			}
		})
	}
}

func TestPolicyConditionsAndRemove(t *testing.T) {
	addr := startFake(t)
	ep := []string{"--endpoint", addr, "--insecure"}
	res := "//pubsub.googleapis.com/projects/demo/topics/t"
	cond := []string{"--condition-title", "until 2030", "--condition-expression", `request.time < timestamp("2030-01-01T00:00:00Z")`}
	r := runCmd(t, append(append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/browser", "--member", "group:ops@example.com"}, cond...), ep...)...)
	if r.code != exitOK {
		t.Fatalf("conditional add-binding exited %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "(version 3,") || !strings.Contains(r.stdout, `roles/browser (condition "until 2030": request.time < timestamp("2030-01-01T00:00:00Z"))`) {
		t.Errorf("conditional add-binding printed:\n%s", r.stdout)
	}

	// --dry-run shows the change and writes nothing.
	dry := runCmd(t, append(append([]string{"policy", "remove-binding", "--dry-run", "--resource", res, "--role", "roles/browser", "--member", "group:ops@example.com"}, cond...), ep...)...)
	if dry.code != exitOK {
		t.Fatalf("dry run exited %d: %s", dry.code, dry.stderr)
	}
	if !strings.Contains(dry.stdout, "nothing written") || !strings.Contains(dry.stdout, `  - roles/browser (condition "until 2030"`) {
		t.Errorf("dry run printed:\n%s", dry.stdout)
	}
	dryAdd := runCmd(t, append([]string{"policy", "add-binding", "--dry-run", "--resource", res, "--role", "roles/viewer", "--member", "user:bob@example.com"}, ep...)...)
	if !strings.Contains(dryAdd.stdout, "  + roles/viewer  user:bob@example.com") {
		t.Errorf("dry-run add printed:\n%s", dryAdd.stdout)
	}
	dryNone := runCmd(t, append([]string{"policy", "remove-binding", "--dry-run", "--resource", res, "--role", "roles/viewer", "--member", "user:bob@example.com"}, ep...)...)
	if !strings.Contains(dryNone.stdout, "no change") {
		t.Errorf("dry run of nothing printed:\n%s", dryNone.stdout)
	}
	g := runCmd(t, append([]string{"policy", "get", "--resource", res}, ep...)...)
	if !strings.Contains(g.stdout, "group:ops@example.com") || strings.Contains(g.stdout, "bob@") {
		t.Errorf("a dry run wrote something:\n%s", g.stdout)
	}

	// The unconditional remove leaves the conditional grant; the
	// conditional one takes it away.
	rm := runCmd(t, append([]string{"policy", "remove-binding", "--resource", res, "--role", "roles/browser", "--member", "group:ops@example.com"}, ep...)...)
	if rm.code != exitOK || !strings.Contains(rm.stdout, "group:ops@example.com") {
		t.Errorf("unconditional remove exited %d:\n%s", rm.code, rm.stdout)
	}
	rm = runCmd(t, append(append([]string{"policy", "remove-binding", "--resource", res, "--role", "roles/browser", "--member", "group:ops@example.com"}, cond...), ep...)...)
	if rm.code != exitOK || !strings.Contains(rm.stdout, "no bindings") {
		t.Errorf("conditional remove exited %d:\n%s%s", rm.code, rm.stdout, rm.stderr)
	}
}

// TestPolicyRetriesThroughFaults points the policy command at a fake that
// fails half its calls and loses a fifth of its write answers: the change
// lands, once, and stderr tells each retry. The retries wait on a virtual
// clock.
func TestPolicyRetriesThroughFaults(t *testing.T) {
	clock := iamtest.NewVirtualClock(time.Now())
	policyTestClock = clock
	t.Cleanup(func() { policyTestClock = nil })
	runCmd := clockCmd(clock)
	addr := startFake(t, "--fail-rate", "0.5", "--codes", "unavailable,INTERNAL", "--lost-answer-rate", "0.2", "--seed", "3")
	ep := []string{"--endpoint", addr, "--insecure", "--deadline", "10m", "--timeout", "0"}
	retries := 0
	for i := range 4 {
		member := []string{"user:a@example.com", "user:b@example.com", "user:c@example.com", "user:d@example.com"}[i]
		r := runCmd(t, append([]string{"policy", "add-binding", "--resource", "projects/flaky", "--role", "roles/viewer", "--member", member}, ep...)...)
		if r.code != exitOK {
			t.Fatalf("add-binding %s exited %d: %s", member, r.code, r.stderr)
		}
		retries += strings.Count(r.stderr, "retrying in")
	}
	if retries == 0 {
		t.Error("no retry was told on stderr: the faults did not bite")
	}
	r := runCmd(t, append([]string{"policy", "get", "--resource", "projects/flaky"}, ep...)...)
	if r.code != exitOK {
		t.Fatalf("get exited %d: %s", r.code, r.stderr)
	}
	for _, m := range []string{"a", "b", "c", "d"} {
		if n := strings.Count(r.stdout, "user:"+m+"@example.com"); n != 1 {
			t.Errorf("user:%s@example.com appears %d times:\n%s", m, n, r.stdout)
		}
	}
}

func TestPolicyRealAPIErrorsAreClear(t *testing.T) {
	// Nothing listens there: the command fails (exit 1) with the server's
	// code, after its retries, which run on a virtual clock.
	clock := iamtest.NewVirtualClock(time.Now())
	policyTestClock = clock
	t.Cleanup(func() { policyTestClock = nil })
	runCmd := clockCmd(clock)
	r := runCmd(t, "policy", "get", "--resource", "projects/p", "--endpoint", "127.0.0.1:1", "--insecure", "--deadline", "3s")
	if r.code != exitFailure || !strings.Contains(r.stderr, "Unavailable") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "retrying in") || !strings.Contains(r.stderr, "gave up: retry deadline reached") {
		t.Errorf("the retries are not told on stderr:\n%s", r.stderr)
	}
}

// TestPolicyServiceAccountGoesThroughTheAdminAPI: a service account's
// policy is read with the IAM admin API (policy.FromAdmin); the fake has no
// such account, and says so, NOT_FOUND, which is not retried by default.
func TestPolicyServiceAccountGoesThroughTheAdminAPI(t *testing.T) {
	addr := startFake(t)
	r := runCmd(t, "policy", "add-binding", "--endpoint", addr, "--insecure",
		"--resource", "projects/p/serviceAccounts/robot@p.iam.gserviceaccount.com",
		"--role", "roles/iam.serviceAccountUser", "--member", "user:alice@example.com")
	if r.code != exitFailure {
		t.Fatalf("exit %d, want %d: %s", r.code, exitFailure, r.stderr)
	}
	for _, want := range []string{"policy.Update attempt 1: NOT_FOUND (HTTP 404, Propagation): gave up: not retryable", "NotFound", "robot@p.iam.gserviceaccount.com", "run again with --retry-not-found"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}
