package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tool is the iamretryvet binary TestMain builds (without the race
// detector, whatever the tests or GOFLAGS run with: it analyzes whole
// dependency graphs), "" when there is no go command.
var tool string

// goEnv is the environment of the go commands and tool runs: the module
// cache only. GOFLAGS is kept (make test sets -race there, so that the
// package loads reuse the library tests' race-built dependencies).
var goEnv = append(os.Environ(), "GOPROXY=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly"), "GOWORK=off")

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if _, err := exec.LookPath("go"); err == nil {
			dir, err := os.MkdirTemp("", "iamretryvet")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(dir)
			tool = filepath.Join(dir, "iamretryvet")
			if out, err := exec.Command("go", "build", "-race=false", "-o", tool, ".").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
				return 1
			}
		}
		return m.Run()
	}())
}

// run runs name with args in dir and returns its output and exit code.
func run(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, goEnv
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

// report is one finding of iamretryvet -json.
type report struct{ Posn, Message string }

// runJSON runs iamretryvet -json over patterns in dir: it must exit 0.
func runJSON(t *testing.T, dir string, patterns ...string) map[string]map[string][]report {
	t.Helper()
	cmd := exec.Command(tool, append([]string{"-json"}, patterns...)...)
	cmd.Dir, cmd.Env = dir, goEnv
	js, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("iamretryvet -json: %v (want exit 0)\n%s", err, exit.Stderr)
		}
		t.Fatalf("iamretryvet -json: %v", err)
	}
	var got map[string]map[string][]report
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("iamretryvet -json: %v\n%s", err, js)
	}
	return got
}

// TestCommand runs iamretryvet the documented ways over the unsaferetry
// corpus (two reports): on its own it prints them and exits 3, and 0 with
// no output on a clean package; with -json it prints multichecker's JSON
// and exits 0; under go vet -vettool it reports them and go vet fails.
func TestCommand(t *testing.T) {
	if tool == "" {
		t.Skip("no go command on PATH")
	}
	corpus, err := filepath.Abs(filepath.Join("analyzers", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	out, code := run(t, corpus, tool, "./unsaferetry")
	if code != 3 || strings.Count(out, "unsaferetry.go:") != 2 || !strings.Contains(out, "CreateServiceAccountKey") {
		t.Errorf("iamretryvet ./unsaferetry: exit %d, want 3 with 2 reports:\n%s", code, out)
	}
	out, code = run(t, corpus, tool, "./clean")
	if code != 0 || out != "" {
		t.Errorf("iamretryvet on a clean package: exit %d, want 0 and no output:\n%s", code, out)
	}

	got := runJSON(t, corpus, "./unsaferetry")
	diags := got["example.com/vetcorpus/unsaferetry"]["unsaferetry"]
	if len(diags) != 2 || !strings.Contains(diags[0].Posn, "unsaferetry.go:") || diags[0].Message == "" {
		t.Errorf("iamretryvet -json: got %+v, want 2 unsaferetry reports with posn and message", got)
	}

	out, code = run(t, corpus, "go", "vet", "-vettool="+tool, "./unsaferetry")
	if code == 0 || strings.Count(out, "unsaferetry.go:") != 2 {
		t.Errorf("go vet -vettool: exit %d, want a failure with 2 reports:\n%s", code, out)
	}
}
