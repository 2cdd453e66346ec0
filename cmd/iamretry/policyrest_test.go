package main

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/iamtest"
)

// startFakeREST runs "iamretry fake-server --rest-listen 127.0.0.1:0"
// in-process and returns the gRPC address and the REST face's base URL.
func startFakeREST(t *testing.T, flags ...string) (grpcAddr, restURL string) {
	t.Helper()
	addr, out := startFakeOut(t, append([]string{"--rest-listen", "127.0.0.1:0"}, flags...)...)
	url, ok := out.waitLine("fake IAM REST face listening on ", nil)
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("fake-server --rest-listen did not say where its REST face is:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "--transport rest --endpoint "+url+" --insecure") {
		t.Errorf("fake-server does not say how to point the CLI at its REST face:\n%s", out.String())
	}
	return addr, url
}

// TestPolicyRESTAgainstFakeServer: --transport rest reaches projects,
// folders and organizations through cloudresourcemanager/v3 and service
// accounts through iam/v1, on the fake's REST face, which serves the same
// store as its gRPC face.
func TestPolicyRESTAgainstFakeServer(t *testing.T) {
	addr, url := startFakeREST(t)
	rest := []string{"--transport", "rest", "--endpoint", url, "--insecure"}

	// A service account to change the policy of, made over the REST face.
	resp, err := http.Post(url+"v1/projects/demo/serviceAccounts", "application/json", strings.NewReader(`{"accountId": "deployer"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("creating a service account over REST: %s", resp.Status)
	}

	for _, res := range []string{
		"projects/demo",     // cloudresourcemanager/v3 Projects
		"folders/123",       // cloudresourcemanager/v3 Folders
		"organizations/456", // cloudresourcemanager/v3 Organizations
		"projects/demo/serviceAccounts/deployer@demo.iam.gserviceaccount.com", // iam/v1
		"//cloudresourcemanager.googleapis.com/projects/full",                 // the full name of a project
	} {
		t.Run(strings.ReplaceAll(res, "/", "_"), func(t *testing.T) {
			r := runCmd(t, append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:Alice@example.com"}, rest...)...)
			if r.code != exitOK {
				t.Fatalf("add-binding exited %d: %s", r.code, r.stderr)
			}
			if !strings.Contains(r.stdout, "grant roles/viewer to user:Alice@example.com: done") || !strings.Contains(r.stdout, "    user:alice@example.com") {
				t.Errorf("add-binding printed:\n%s", r.stdout)
			}
			g := runCmd(t, append([]string{"policy", "get", "--resource", res}, rest...)...)
			if g.code != exitOK {
				t.Fatalf("get exited %d: %s", g.code, g.stderr)
			}
			if want := "policy of " + res + " (version 1, etag "; !strings.HasPrefix(g.stdout, want) || !strings.Contains(g.stdout, "  roles/viewer\n    user:alice@example.com\n") {
				t.Errorf("get printed:\n%s", g.stdout)
			}
			// The gRPC face reads what REST wrote: one store.
			gg := runCmd(t, "policy", "get", "--resource", res, "--endpoint", addr, "--insecure")
			if gg.code != exitOK || gg.stdout != g.stdout {
				t.Errorf("over gRPC get exited %d and printed:\n%s\nover REST:\n%s%s", gg.code, gg.stdout, g.stdout, gg.stderr)
			}
			again := runCmd(t, append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:alice@example.com"}, rest...)...)
			if again.code != exitOK || !strings.Contains(again.stdout, "already present, nothing written") {
				t.Errorf("add-binding again exited %d:\n%s", again.code, again.stdout)
			}
			rm := runCmd(t, append([]string{"policy", "remove-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:alice@example.com"}, rest...)...)
			if rm.code != exitOK || !strings.Contains(rm.stdout, "revoke roles/viewer from user:alice@example.com: done") || !strings.Contains(rm.stdout, "no bindings") {
				t.Errorf("remove-binding exited %d:\n%s%s", rm.code, rm.stdout, rm.stderr)
			}
			g = runCmd(t, append([]string{"policy", "get", "--json", "--resource", res}, rest...)...)
			if g.code != exitOK || strings.Contains(g.stdout, "alice") || !strings.Contains(g.stdout, `"etag"`) {
				t.Errorf("get --json after remove exited %d:\n%s", g.code, g.stdout)
			}
		})
	}
}

// TestPolicyRESTConditionalBinding: a conditional grant goes through the
// discovery client's Policy type and back (version 3, the condition).
func TestPolicyRESTConditionalBinding(t *testing.T) {
	_, url := startFakeREST(t)
	rest := []string{"--transport", "rest", "--endpoint", url, "--insecure"}
	cond := []string{"--condition-title", "until 2030", "--condition-expression", `request.time < timestamp("2030-01-01T00:00:00Z")`}
	r := runCmd(t, append(append([]string{"policy", "add-binding", "--resource", "folders/7", "--role", "roles/browser", "--member", "group:ops@example.com"}, cond...), rest...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "(version 3,") || !strings.Contains(r.stdout, `roles/browser (condition "until 2030": request.time < timestamp("2030-01-01T00:00:00Z"))`) {
		t.Errorf("conditional add-binding exited %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestPolicyRESTRetriesThroughFaults points --transport rest at a fake
// whose REST face fails half its calls and loses a fifth of its write
// answers: every change lands once. The Updater owns the retries of its
// calls (stderr tells only policy.Update attempts during a change: the
// RoundTripper passes them through); a plain get is retried by the
// RoundTripper, under the gRPC method the request maps to. The waits run on
// a virtual clock.
func TestPolicyRESTRetriesThroughFaults(t *testing.T) {
	clock := iamtest.NewVirtualClock(time.Now())
	policyTestClock = clock
	t.Cleanup(func() { policyTestClock = nil })
	runCmd := clockCmd(clock)
	_, url := startFakeREST(t, "--fail-rate", "0.5", "--codes", "unavailable,INTERNAL", "--lost-answer-rate", "0.2", "--seed", "3")
	rest := []string{"--transport", "rest", "--endpoint", url, "--insecure", "--deadline", "10m", "--timeout", "0"}
	members := []string{"user:a@example.com", "user:b@example.com", "user:c@example.com", "user:d@example.com"}
	updateRetries := 0
	for _, m := range members {
		r := runCmd(t, append([]string{"policy", "add-binding", "--resource", "projects/flaky", "--role", "roles/viewer", "--member", m}, rest...)...)
		if r.code != exitOK {
			t.Fatalf("add-binding %s exited %d: %s", m, r.code, r.stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if line != "" && !strings.HasPrefix(line, "iamretry: policy.Update attempt ") {
				t.Errorf("a layer other than the Updater retried a call of add-binding: %q", line)
			}
		}
		updateRetries += strings.Count(r.stderr, "retrying in")
	}
	if updateRetries == 0 {
		t.Error("no retry of the Updater was told on stderr: the faults did not bite")
	}
	getRetries := 0
	for range 10 {
		r := runCmd(t, append([]string{"policy", "get", "--resource", "projects/flaky"}, rest...)...)
		if r.code != exitOK {
			t.Fatalf("get exited %d: %s", r.code, r.stderr)
		}
		getRetries += strings.Count(r.stderr, "iamretry: Projects.GetIamPolicy attempt ")
		for _, m := range members {
			if n := strings.Count(r.stdout, m+"\n"); n != 1 {
				t.Errorf("%s appears %d times:\n%s", m, n, r.stdout)
			}
		}
	}
	t.Logf("retries told: %d by the Updater over 4 changes, %d by the RoundTripper over 10 reads", updateRetries, getRetries)
	if getRetries == 0 {
		t.Error("no retry of the RoundTripper was told on stderr for get: the faults did not bite")
	}
}

// TestPolicyRESTUsageErrors: what --transport rest does not reach, and
// endpoints that do not fit the transport, are usage errors naming them.
func TestPolicyRESTUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--transport", "rest", "--resource", "//pubsub.googleapis.com/projects/p/topics/t"},
			"--transport rest is supported for projects/P, folders/F, organizations/O and projects/P/serviceAccounts/EMAIL"},
		{[]string{"--transport", "soap", "--resource", "projects/p"}, `--transport "soap": want grpc or rest`},
		{[]string{"--transport", "rest", "--resource", "projects/p", "--endpoint", "http://127.0.0.1:8086/"}, "plain http has no TLS; add --insecure"},
		{[]string{"--transport", "rest", "--resource", "projects/p", "--endpoint", "https://127.0.0.1:8086/", "--insecure"}, "give http://127.0.0.1:8086/"},
		{[]string{"--transport", "rest", "--resource", "projects/p", "--endpoint", "ftp://h:1/", "--insecure"}, "the scheme must be http or https"},
		{[]string{"--transport", "rest", "--resource", "projects/p", "--endpoint", "http://h:0/", "--insecure"}, "the port must be a number from 1 to 65535"},
		{[]string{"--transport", "rest", "--resource", "projects/p", "--endpoint", "nohost", "--insecure"}, "want HOST:PORT"},
		{[]string{"--resource", "projects/p", "--endpoint", "http://127.0.0.1:8086/", "--insecure"}, "the gRPC transport takes HOST:PORT"},
	} {
		r := runCmd(t, append([]string{"policy", "get"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("policy get %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), r.code, r.stderr, exitUsage, c.want)
		}
	}
}

// TestRESTEndpointForms: HOST:PORT is http with --insecure, https without;
// a URL keeps its path and gains a trailing slash.
func TestRESTEndpointForms(t *testing.T) {
	for _, c := range []struct {
		ep       string
		insecure bool
		want     string
	}{
		{"127.0.0.1:8086", true, "http://127.0.0.1:8086/"},
		{"iam.example.com:443", false, "https://iam.example.com:443/"},
		{"http://127.0.0.1:8086", true, "http://127.0.0.1:8086/"},
		{"https://proxy.example.com/iam", false, "https://proxy.example.com/iam/"},
	} {
		got, err := restEndpoint(c.ep, c.insecure)
		if err != nil || got != c.want {
			t.Errorf("restEndpoint(%q, %v) = %q, %v; want %q", c.ep, c.insecure, got, err, c.want)
		}
	}
}

// TestFakeServerRESTListenErrors: a bad --rest-listen is a usage error
// naming it; a port that is taken fails the command, naming the flag.
func TestFakeServerRESTListenErrors(t *testing.T) {
	r := runCmd(t, "fake-server", "--listen", "127.0.0.1:0", "--rest-listen", "8086")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--rest-listen "8086": want host:port`) {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = runCmd(t, "fake-server", "--listen", "127.0.0.1:0", "--rest-listen", "127.0.0.1:70000")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the port must be a number from 0 to 65535") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP here: %v", err)
	}
	defer lis.Close()
	r = runCmd(t, "fake-server", "--listen", "127.0.0.1:0", "--rest-listen", lis.Addr().String())
	if r.code != exitFailure || !strings.Contains(r.stderr, "cannot listen on "+lis.Addr().String()+" (--rest-listen)") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
