package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// The apply tests run the real binary, built once per test process
// (builtBinary), against "iamretry fake-server" started as a process of its
// own on loopback TCP ports, as a pipeline would. The retry schedule runs
// 100 times faster than the wall clock (the hidden --time-scale), so a
// 1 s backoff is 10 ms and the 300 s deadline 3 s: no test waits real
// seconds of backoff.

var (
	buildOnce sync.Once
	binPath   string
	binDir    string
	buildErr  error
)

// builtBinary builds the iamretry binary once (go build into a temporary
// directory, removed when the tests end: removeBuiltBinary in TestMain),
// with the race detector when the tests run with it.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "iamretry-apply-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "iamretry")
		args := []string{"build", "-o", binPath}
		if raceBuild {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// removeBuiltBinary removes what builtBinary built.
func removeBuiltBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// fakeProc is a running "iamretry fake-server" process.
type fakeProc struct {
	cmd      *exec.Cmd
	grpcAddr string
	restURL  string
	out      *syncBuffer
	done     chan error
	stopped  bool
}

// startFakeProc starts "iamretry fake-server" on free loopback ports (gRPC
// and REST) with flags, and stops it with SIGINT when the test ends.
func startFakeProc(t *testing.T, flags ...string) *fakeProc {
	t.Helper()
	bin := builtBinary(t)
	cmd := exec.Command(bin, append([]string{"fake-server", "--listen", "127.0.0.1:0", "--rest-listen", "127.0.0.1:0"}, flags...)...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &fakeProc{cmd: cmd, out: out, done: make(chan error, 1)}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		close(exited)
		f.done <- err
	}()
	var ok1, ok2 bool
	f.grpcAddr, ok1 = out.waitLine("fake IAM server listening on ", exited)
	f.restURL, ok2 = out.waitLine("fake IAM REST face listening on ", exited)
	if !ok1 || !ok2 {
		cmd.Process.Kill()
		<-exited
		t.Fatalf("fake-server did not start:\n%s", out.String())
	}
	t.Cleanup(func() { f.stop(t) })
	return f
}

// stop ends the fake with SIGINT and returns how many calls it served.
func (f *fakeProc) stop(t *testing.T) int {
	t.Helper()
	if f.stopped {
		return -1
	}
	f.stopped = true
	f.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-f.done:
		if err != nil {
			t.Errorf("fake-server exited with %v:\n%s", err, f.out.String())
		}
	case <-time.After(30 * time.Second):
		f.cmd.Process.Kill()
		t.Fatalf("fake-server did not stop on SIGINT")
	}
	m := regexp.MustCompile(`fake IAM server stopped \((\d+) calls served\)`).FindStringSubmatch(f.out.String())
	if m == nil {
		t.Fatalf("fake-server did not say how many calls it served:\n%s", f.out.String())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// grpcEP and restEP are the apply flags that point at the fake.
func (f *fakeProc) grpcEP() []string {
	return []string{"--endpoint", f.grpcAddr, "--insecure", "--time-scale", "100"}
}

func (f *fakeProc) restEP() []string {
	return []string{"--transport", "rest", "--endpoint", f.restURL, "--insecure", "--time-scale", "100"}
}

// ep is grpcEP or restEP, by the transport's name ("grpc", "rest").
func (f *fakeProc) ep(transport string) []string {
	if transport == "rest" {
		return f.restEP()
	}
	return f.grpcEP()
}

// admin is an IAM admin client straight to the fake (gRPC, no iamretry),
// closed when the test ends.
func (f *fakeProc) admin(t *testing.T) adminpb.IAMClient {
	t.Helper()
	conn, err := grpc.NewClient(f.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return adminpb.NewIAMClient(conn)
}

// policyOf reads a policy straight from the fake (gRPC, no retries).
func (f *fakeProc) policyOf(t *testing.T, resource string) *iampb.Policy {
	t.Helper()
	conn, err := grpc.NewClient(f.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var err2 error
	for range 50 { // the fake may inject faults: read until a read succeeds
		p, err := policy.FromConn(conn).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: resource,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err == nil {
			return p
		}
		err2 = err
	}
	t.Fatalf("GetIamPolicy %s: %v", resource, err2)
	return nil
}

// procResult is what one apply process printed and how it ended.
type procResult struct {
	code           int
	stdout, stderr string
}

// applyProc runs the binary with args (stdin: in) to its end; a process
// that runs past applyTimeout is killed and reported, with exit code -1.
func applyProc(t *testing.T, in string, args ...string) procResult {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errb, strings.NewReader(in)
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(applyTimeout):
		cmd.Process.Kill()
		<-done
		t.Errorf("%v ran for more than %v:\n%s\n%s", args, applyTimeout, out.String(), errb.String())
		return procResult{code: -1, stdout: out.String(), stderr: errb.String()}
	}
	return procResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// applyTimeout bounds one apply process of a test (it may be called from
// goroutines other than the test's: it reports with t.Errorf).
var applyTimeout = 60 * time.Second

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// events parses --json output.
func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// byResource returns the resource events of a --json run, by resource.
func byResource(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	m := map[string]map[string]any{}
	for _, ev := range events(t, out) {
		if ev["type"] == "resource" {
			m[ev["resource"].(string)] = ev
		}
	}
	return m
}

func applySummaryOf(t *testing.T, out string) map[string]any {
	t.Helper()
	evs := events(t, out)
	last := evs[len(evs)-1]
	if last["type"] != "summary" {
		t.Fatalf("the last event is not the summary: %v", last)
	}
	return last
}

const badApplyFile = `resources:
  - resource: projects/test-my-project
    add:
      - {role: roles/viewer, member: "usr:alice@example.com"}
      - {role: viewer, member: "user:alice@example.com", extra: 1}
      - role: roles/storage.objectViewer
        member: "group:readers@example.com"
        condition: {title: until-2027, expresion: 'true'}
    remov:
      - {role: roles/editor, member: "user:bob@example.com"}
  - resource: projects/test-my-project
    add: [{role: roles/viewer, member: "user:carol@example.com"}]
  - resource: bogus/x/y
    add: [{role: roles/viewer, member: 5}]
  - resource: //storage.googleapis.com/b/x
    add: [{role: roles/viewer, member: "user:a@example.com"}]
  - resource: projects/test-other
    add: [{role: roles/viewer, member: "user:a@example.com"}]
    remove: [{role: roles/viewer, member: "user:A@example.com"}]
  - resource: projects/test-empty
`

// TestApplyBadFileExit2: every mistake of a file is reported at once, each
// with FILE:LINE; the exit code is 2 and nothing reaches the server.
func TestApplyBadFileExit2(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t)
	path := writeTemp(t, "bad.yaml", badApplyFile)
	r := applyProc(t, "", append([]string{"apply", "-f", path}, fake.grpcEP()...)...)
	if r.code != exitUsage {
		t.Fatalf("exit %d, want 2:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		path + `:4: member "usr:alice@example.com": unknown principal kind "usr:"`,
		path + `:5: unknown key "extra" in a grant to add`,
		path + `:5: role "viewer": a role is roles/NAME`,
		path + `:8: unknown key "expresion" in the condition`,
		path + `:8: the condition has no expression`,
		path + `:9: unknown key "remov" in a resource`,
		path + `:11: resource "projects/test-my-project" is listed twice (first at line 2)`,
		path + `:13: resource "bogus/x/y": expected collection/ID pairs`,
		path + `:14: member of a grant to add of resource "bogus/x/y" must be a string`,
		path + `:15: resource "//storage.googleapis.com/b/x": this command does not reach storage.googleapis.com`,
		path + `:19: resource "projects/test-other": the grant of roles/viewer to user:A@example.com is listed twice (first at line 18)`,
		path + `:20: resource "projects/test-empty" has none of add, remove and bindings`,
		"iamretry apply: 12 errors in " + path + "; nothing was sent",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("a bad file printed on stdout:\n%s", r.stdout)
	}
	if n := fake.stop(t); n != 0 {
		t.Errorf("the server received %d calls for a bad file; want none", n)
	}
}

// TestApplyFileForms: JSON through the same schema (errors with lines),
// stdin, syntax errors, and a second YAML document.
func TestApplyFileForms(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t)
	for _, c := range []struct {
		name, file, want string
		code             int
	}{
		{"json", `{"resources": [
  {"resource": "projects/test-j1",
   "add": [{"role": "roles/viewer", "member": "user:j@example.com"}]}
]}`, "projects/test-j1: changed (+1 -0", exitOK},
		{"json-unknown-key", `{"resources": [
  {"resource": "projects/test-j2",
   "add": [{"role": "roles/viewer", "membr": "user:j@example.com"}]}
]}`, `:3: unknown key "membr"`, exitUsage},
		{"syntax", "resources:\n  - resource: projects/test-x\n    add: [\n", "<stdin>:3: not valid YAML or JSON", exitUsage},
		{"two-docs", "resources:\n  - {resource: projects/test-x, add: [{role: roles/viewer, member: allUsers}]}\n---\nresources: []\n", ":3: a second YAML document", exitUsage},
		{"empty", "", "the file is empty", exitUsage},
		{"no-resources", "resources: []\n", ":1: the resources list is empty", exitUsage},
		{"rest-unsupported", "resources:\n  - {resource: //pubsub.googleapis.com/projects/test-p/topics/t, add: [{role: roles/viewer, member: allUsers}]}\n",
			":2: resource \"//pubsub.googleapis.com/projects/test-p/topics/t\": --transport rest reaches", exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"apply", "-f", "-"}, fake.grpcEP()...)
			if c.name == "rest-unsupported" {
				args = append([]string{"apply", "-f", "-"}, fake.restEP()...)
			}
			r := applyProc(t, c.file, args...)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("exit %d (want %d), want %q in:\n%s%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
			if c.code == exitUsage && !strings.Contains(r.stderr, "<stdin>:") {
				t.Errorf("errors do not name the file <stdin>:\n%s", r.stderr)
			}
		})
	}
}

// TestApplyUsage: flags are checked before the file is read.
func TestApplyUsage(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"apply"}, "-f FILE is required"},
		{[]string{"apply", "-f", "a.yaml", "--file", "b.yaml"}, "given more than once"},
		{[]string{"apply", "-f", "a.yaml", "--parallel", "0"}, "--parallel 0: must be at least 1"},
		{[]string{"apply", "-f", "a.yaml", "--insecure"}, "--insecure turns off TLS"},
		{[]string{"apply", "-f", "a.yaml", "--transport", "soap"}, `--transport "soap"`},
		{[]string{"apply", "-f", "/nonexistent/a.yaml"}, "no such file"},
		{[]string{"apply", "-f", "a.yaml", "extra"}, `unexpected argument "extra"`},
	} {
		r := runCmd(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	h := runCmd(t, "apply", "-h")
	for _, want := range []string{"--parallel N", "write", "quotas", "--deadline", "(default 5m0s)", "--dry-run", "--json", "130", "143", "resources:", "condition:"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("apply -h lacks %q:\n%s", want, h.stdout)
		}
	}
	if strings.Contains(h.stdout, "time-scale") {
		t.Errorf("apply -h lists the hidden --time-scale:\n%s", h.stdout)
	}
	if r := runCmd(t, "help"); !strings.Contains(r.stdout, "\n  apply ") {
		t.Errorf("help does not list apply:\n%s", r.stdout)
	}
}

const planFile = `resources:
  - resource: projects/test-plan
    add:
      - {role: roles/viewer, member: "user:Alice@example.com"}
      - role: roles/storage.objectViewer
        member: "group:readers@example.com"
        condition: {title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")'}
    remove:
      - {role: roles/editor, member: "user:bob@example.com"}
  - resource: folders/123
    add:
      - {role: roles/browser, member: "domain:example.com"}
`

// TestApplyPlanApplyRerun, over both transports: --dry-run shows the plan
// and writes nothing; apply converges; a rerun writes nothing and says so;
// members the file does not name are left alone.
func TestApplyPlanApplyRerun(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, transport := range []string{"grpc", "rest"} {
		t.Run(transport, func(t *testing.T) {
			fake := startFakeProc(t)
			ep := fake.ep(transport)
			// Someone else's grant, and one the file removes.
			seed := writeTemp(t, "seed.yaml", `resources:
  - resource: projects/test-plan
    add: [{role: roles/editor, member: "user:bob@example.com"}, {role: roles/editor, member: "user:keep@example.com"}]
`)
			if r := applyProc(t, "", append([]string{"apply", "-f", seed}, ep...)...); r.code != exitOK {
				t.Fatalf("seeding: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			path := writeTemp(t, "plan.yaml", planFile)
			args := append([]string{"apply", "-f", path}, ep...)

			dry := applyProc(t, "", append(args, "--dry-run")...)
			if dry.code != exitOK {
				t.Fatalf("dry run: exit %d:\n%s%s", dry.code, dry.stdout, dry.stderr)
			}
			for _, want := range []string{
				"projects/test-plan: would change:\n" +
					"  - roles/editor  user:bob@example.com\n" +
					`  + roles/storage.objectViewer (condition "until-2027": request.time < timestamp("2027-01-01T00:00:00Z"))  group:readers@example.com` + "\n" +
					"  + roles/viewer  user:alice@example.com\n",
				"folders/123: would change:\n  + roles/browser  domain:example.com\n",
				"summary (dry run, nothing written): 2 resources: 2 would change, 0 nothing to do, 0 failed",
			} {
				if !strings.Contains(dry.stdout, want) {
					t.Errorf("dry run lacks %q:\n%s", want, dry.stdout)
				}
			}
			dj := applyProc(t, "", append(args, "--dry-run", "--json")...)
			if ev := byResource(t, dj.stdout)["folders/123"]; dj.code != exitOK || ev["outcome"] != "would_change" || ev["writes"] != 0.0 {
				t.Errorf("dry run --json: exit %d, folders/123: %v", dj.code, ev)
			}

			r := applyProc(t, "", append(args, "--json")...)
			if r.code != exitOK {
				t.Fatalf("apply: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			got := byResource(t, r.stdout)
			if ev := got["projects/test-plan"]; ev["outcome"] != "changed" || ev["added"] != 2.0 || ev["removed"] != 1.0 || ev["writes"] != 1.0 || ev["attempts"] != 1.0 {
				t.Errorf("projects/test-plan: %v", ev)
			}
			if ev := got["folders/123"]; ev["outcome"] != "changed" || ev["line"] != 10.0 {
				t.Errorf("folders/123: %v", ev)
			}
			if s := applySummaryOf(t, r.stdout); s["ok"] != true || s["changed"] != 2.0 || s["writes"] != 2.0 {
				t.Errorf("summary: %v", s)
			}

			again := applyProc(t, "", args...)
			if again.code != exitOK || !strings.Contains(again.stdout, "summary: 2 resources, all already as "+path+" says; nothing written") ||
				!strings.Contains(again.stdout, "projects/test-plan: unchanged, already as the file says; nothing written") {
				t.Errorf("rerun: exit %d:\n%s%s", again.code, again.stdout, again.stderr)
			}
			if dry := applyProc(t, "", append(args, "--dry-run")...); !strings.Contains(dry.stdout, "projects/test-plan: nothing to do") {
				t.Errorf("dry run after apply:\n%s", dry.stdout)
			}

			p := fake.policyOf(t, "projects/test-plan")
			var grants []string
			for _, b := range p.GetBindings() {
				for _, m := range b.GetMembers() {
					grants = append(grants, b.GetRole()+" "+m)
				}
			}
			for _, want := range []string{"roles/editor user:keep@example.com", "roles/viewer user:alice@example.com", "roles/storage.objectViewer group:readers@example.com"} {
				if !strings.Contains(strings.Join(grants, "\n"), want) {
					t.Errorf("policy lacks %q: %v", want, grants)
				}
			}
			if strings.Contains(strings.Join(grants, "\n"), "bob@") || len(grants) != 3 {
				t.Errorf("policy: %v", grants)
			}
		})
	}
}

// TestApplyFailuresExit1: a resource the server refuses fails, named with
// the server's error, in text and JSON, on both transports; the others
// converge; the exit code is 1.
func TestApplyFailuresExit1(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t)
	path := writeTemp(t, "fail.yaml", `resources:
  - resource: projects/test-p1
    add: [{role: roles/viewer, member: allUsers}]
  - resource: projects/test-p2
    add: [{role: roles/Viewer, member: "user:a@example.com"}]
  - resource: projects/test-p3
    add: [{role: roles/viewer, member: "user:a@example.com"}]
`)
	for _, transport := range []string{"grpc", "rest"} {
		ep := fake.ep(transport)
		r := applyProc(t, "", append([]string{"apply", "-f", path}, ep...)...)
		if r.code != exitFailure {
			t.Errorf("%s: exit %d, want 1:\n%s%s", transport, r.code, r.stdout, r.stderr)
		}
		for _, want := range []string{
			"failed: projects/test-p1 (line 2): INVALID_ARGUMENT: Request contains an invalid argument. Project does not support allUsers",
			`failed: projects/test-p2 (line 4): INVALID_ARGUMENT: invalid role "roles/Viewer"`,
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", transport, want, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, "2 failed") {
			t.Errorf("%s: summary does not count 2 failures:\n%s", transport, r.stdout)
		}
		j := applyProc(t, "", append([]string{"apply", "-f", path, "--json"}, ep...)...)
		got := byResource(t, j.stdout)
		if j.code != exitFailure || got["projects/test-p2"]["outcome"] != "failed" || got["projects/test-p2"]["code"] != "INVALID_ARGUMENT" ||
			!strings.Contains(got["projects/test-p2"]["error"].(string), "roles/Viewer") || got["projects/test-p3"]["outcome"] != "unchanged" {
			t.Errorf("%s --json: exit %d:\n%s", transport, j.code, j.stdout)
		}
	}
	if p := fake.policyOf(t, "projects/test-p3"); len(p.GetBindings()) != 1 {
		t.Errorf("projects/test-p3 did not converge: %v", p)
	}
}

// TestApplyThroughFaults: with a third of the calls failing and a third of
// the writes losing their answer, every resource converges (exit 0), each
// grant once; the retries are told on stderr; a rerun writes nothing. The
// runs retry with no deadline (--deadline 0): under --time-scale 100 the
// default 300 s is 3 s of wall clock, which a loaded machine's slow calls
// can use up; how the deadline ends a resource is TestApplyMemberWait's
// and the library's to test.
func TestApplyThroughFaults(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t, "--fail-rate", "0.3", "--codes", "UNAVAILABLE,INTERNAL,DEADLINE_EXCEEDED", "--lost-answer-rate", "0.3", "--seed", "7")
	var b strings.Builder
	b.WriteString("resources:\n")
	for i := range 12 {
		fmt.Fprintf(&b, "  - resource: projects/test-f%d\n    add:\n", i)
		for k := range 3 {
			fmt.Fprintf(&b, "      - {role: roles/viewer, member: \"user:m%d@example.com\"}\n", k)
		}
	}
	path := writeTemp(t, "faults.yaml", b.String())
	for _, transport := range []string{"grpc", "rest"} {
		ep := fake.grpcEP()
		if transport == "rest" {
			ep = fake.restEP()
			path = writeTemp(t, "faults.yaml", strings.ReplaceAll(b.String(), "projects/test-f", "projects/test-r"))
		}
		ep = append(ep, "--deadline", "0")
		r := applyProc(t, "", append([]string{"apply", "-f", path, "--json"}, ep...)...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d:\n%s%s", transport, r.code, r.stdout, r.stderr)
		}
		retried := 0
		for _, ev := range byResource(t, r.stdout) {
			if ev["outcome"] != "changed" {
				t.Errorf("%s: %v", transport, ev)
			}
			if ev["attempts"].(float64) > 1 {
				retried++
			}
		}
		if retried == 0 {
			t.Errorf("%s: no resource needed a second attempt at these fault rates:\n%s", transport, r.stdout)
		}
		text := applyProc(t, "", append([]string{"apply", "-f", path}, ep...)...)
		if text.code != exitOK || !strings.Contains(text.stdout, "nothing written") {
			t.Errorf("%s: rerun: exit %d:\n%s%s", transport, text.code, text.stdout, text.stderr)
		}
		if !strings.Contains(text.stderr, "(HTTP 50") || !strings.Contains(text.stderr, "again in") {
			t.Errorf("%s: the rerun's retries are not told on stderr:\n%s", transport, text.stderr)
		}
	}
	for i := range 12 {
		p := fake.policyOf(t, fmt.Sprintf("projects/test-f%d", i))
		if len(p.GetBindings()) != 1 || len(p.GetBindings()[0].GetMembers()) != 3 {
			t.Errorf("projects/test-f%d: %v", i, p.GetBindings())
		}
	}
}

// TestApplyWaitsForNewServiceAccount: a grant to a service account created
// moments ago (the fake hides it, as IAM does) is rerun within --member-wait
// and converges (TestApplyMemberWait: what fails). The fake hides the
// account from its first grant check, not for a span of time: how soon the
// apply process gets to run is no part of the test.
func TestApplyWaitsForNewServiceAccount(t *testing.T) {
	t.Parallel() // its own fake and files
	fake := startFakeIn(t, nil)
	fake.srv.SetPropagationReads(1)
	sa, err := adminpb.NewIAMClient(fake.srv.Conn()).CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{
		Name: "projects/test-pipe", AccountId: "deployer", ServiceAccount: &adminpb.ServiceAccount{DisplayName: "deployer"}})
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "sa.yaml", fmt.Sprintf(`resources:
  - resource: projects/test-pipe
    add: [{role: roles/run.invoker, member: "serviceAccount:%s"}]
`, sa.GetEmail()))
	args := append([]string{"apply", "-f", path, "--json", "--member-wait", "10m"}, fake.grpcEP()...)
	on := applyProc(t, "", args...)
	ev := byResource(t, on.stdout)["projects/test-pipe"]
	if on.code != exitOK || ev["outcome"] != "changed" || ev["attempts"] != 2.0 {
		t.Errorf("default: exit %d:\n%s%s", on.code, on.stdout, on.stderr)
	}
	// The first grant was refused as IAM refuses it, the rerun landed.
	var writes []string
	for _, c := range fake.srv.Calls() {
		if c.Method == iamtest.MethodProjectsSetIamPolicy {
			writes = append(writes, c.Code.String())
		}
	}
	if strings.Join(writes, " ") != "InvalidArgument OK" {
		t.Errorf("SetIamPolicy calls answered %v; want the first refused, the second done", writes)
	}
}

// TestApplySignals: SIGINT and SIGTERM stop a run: no new resource starts,
// what was done is reported, the exit code is 130 or 143; a rerun
// converges the rest, and every grant is there once. The two folders
// converge; the projects' reads meet an outage that lasts until the test
// ends it, retried with no deadline (--deadline 0): the run cannot end
// before the signal, however late the test gets to send it.
func TestApplySignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			fake := startFakeIn(t, nil)
			fake.srv.SetOutage(iamtest.MethodProjectsGetIamPolicy, grpccodes.Unavailable)
			var b strings.Builder
			b.WriteString("resources:\n")
			const n = 20
			grants := "add: [{role: roles/viewer, member: \"user:a@example.com\"}, {role: roles/editor, member: \"user:b@example.com\"}]"
			for _, f := range []string{"folders/101", "folders/102"} {
				fmt.Fprintf(&b, "  - resource: %s\n    %s\n", f, grants)
			}
			for i := 2; i < n; i++ {
				fmt.Fprintf(&b, "  - resource: projects/test-s%d\n    %s\n", i, grants)
			}
			path := writeTemp(t, "sig.yaml", b.String())
			args := append([]string{"apply", "-f", path, "--parallel", "2", "--deadline", "0"}, fake.grpcEP()...)
			cmd := exec.Command(builtBinary(t), args...)
			out := &syncBuffer{}
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = out, &errb
			dieWithTest(cmd)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			for _, f := range []string{"folders/101", "folders/102"} {
				if _, ok := out.waitLine(f+": changed", done); !ok {
					cmd.Process.Kill()
					<-done
					t.Fatalf("%s did not converge:\n%s%s", f, out.String(), errb.String())
				}
			}
			cmd.Process.Signal(sig)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("apply did not end after %v", sig)
			}
			want := 128 + int(sig)
			if code := cmd.ProcessState.ExitCode(); code != want {
				t.Fatalf("exit %d after %v, want %d:\n%s%s", code, sig, want, out.String(), errb.String())
			}
			name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]
			if !strings.Contains(out.String(), "stopped by "+name+": ") || !strings.Contains(out.String(), "not started; run the same command again") {
				t.Errorf("no report of what was done:\n%s", out.String())
			}
			fake.srv.ClearOutage(iamtest.MethodProjectsGetIamPolicy)
			rerun := applyProc(t, "", append(args, "--json")...)
			s := applySummaryOf(t, rerun.stdout)
			if rerun.code != exitOK || s["ok"] != true || s["changed"] != float64(n-2) || s["unchanged"] != 2.0 {
				t.Errorf("rerun: exit %d, summary %v", rerun.code, s)
			}
			for i := range n {
				res := fmt.Sprintf("projects/test-s%d", i)
				if i < 2 {
					res = fmt.Sprintf("folders/10%d", i+1)
				}
				if p := fake.srv.Policy(res); len(p.GetBindings()) != 2 || len(p.GetBindings()[0].GetMembers()) != 1 || len(p.GetBindings()[1].GetMembers()) != 1 {
					t.Errorf("%s: %v", res, p.GetBindings())
				}
			}
		})
	}
}

// TestApplySignalAbandonsWait: a signal abandons at once a read-modify-write
// that waits to run again (here after UNAVAILABLE, on the guidance's real
// schedule: a wait of 1 s or more); it does not wait for --grace.
func TestApplySignalAbandonsWait(t *testing.T) {
	fake := startFakeProc(t, "--fail-rate", "1")
	path := writeTemp(t, "wait.yaml", "resources:\n  - {resource: projects/test-w, add: [{role: roles/viewer, member: allUsers}]}\n")
	cmd := exec.Command(builtBinary(t), "apply", "-f", path, "--endpoint", fake.grpcAddr, "--insecure", "--grace", "1m")
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	if _, ok := errb.waitLine("iamretry: projects/test-w: attempt 1: UNAVAILABLE", done); !ok {
		cmd.Process.Kill()
		<-done
		t.Fatalf("no retry:\n%s%s", out.String(), errb.String())
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("apply did not end after SIGINT")
	}
	if took := time.Since(sent); took > 20*time.Second {
		t.Errorf("ended %v after SIGINT: it waited for --grace", took)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(out.String(), "projects/test-w: interrupted before any write") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}
