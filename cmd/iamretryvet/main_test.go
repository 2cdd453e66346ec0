package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommand builds iamretryvet and runs it the documented ways over the
// unsaferetry corpus (two reports): on its own it prints them and exits 3;
// with -json it prints multichecker's JSON and exits 0; under go vet
// -vettool it reports them and go vet fails.
func TestCommand(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(t.TempDir(), "iamretryvet")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	corpus, err := filepath.Abs(filepath.Join("analyzers", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
	run := func(name string, args ...string) (string, int) {
		cmd := exec.Command(name, args...)
		cmd.Dir = corpus
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return string(out), exit.ExitCode()
		case err != nil:
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out), 0
	}

	out, code := run(bin, "./unsaferetry")
	if code != 3 || strings.Count(out, "unsaferetry.go:") != 2 || !strings.Contains(out, "CreateServiceAccountKey") {
		t.Errorf("iamretryvet ./unsaferetry: exit %d, want 3 with 2 reports:\n%s", code, out)
	}
	out, code = run(bin, "./unwiredclient/noimport")
	if code != 0 || out != "" {
		t.Errorf("iamretryvet on a clean package: exit %d, want 0 and no output:\n%s", code, out)
	}

	cmd := exec.Command(bin, "-json", "./unsaferetry")
	cmd.Dir, cmd.Env = corpus, env
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("iamretryvet -json: %v (want exit 0)", err)
	}
	var got map[string]map[string][]struct{ Posn, Message string }
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("iamretryvet -json: %v\n%s", err, js)
	}
	diags := got["example.com/vetcorpus/unsaferetry"]["unsaferetry"]
	if len(diags) != 2 || !strings.Contains(diags[0].Posn, "unsaferetry.go:") || diags[0].Message == "" {
		t.Errorf("iamretryvet -json: got %+v, want 2 unsaferetry reports with posn and message", got)
	}

	out, code = run(goCmd, "vet", "-vettool="+bin, "./unsaferetry")
	if code == 0 || strings.Count(out, "unsaferetry.go:") != 2 {
		t.Errorf("go vet -vettool: exit %d, want a failure with 2 reports:\n%s", code, out)
	}
}
