package interceptor_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCELOnlyForUsersOfTheFake: github.com/google/cel-go (and its parser
// runtime, antlr) is compiled only by users of the fake (iamtest, which
// checks IAM Conditions with it), never by users of codes, interceptor or
// interceptor/policy.
func TestCELOnlyForUsersOfTheFake(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available (%v)", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "../codes/...", "../interceptor/...")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "cel-go") || strings.Contains(pkg, "antlr") || strings.HasPrefix(pkg, "cel.dev/") {
			t.Errorf("the library compiles %s: only the fake may", pkg)
		}
	}
}

// TestFakeSharesNoCodeWithTheLibrary: the fake (iamtest) imports none of the
// library's packages (a fake that shares code with what it tests proves
// nothing), and the library compiles none of the fake.
func TestFakeSharesNoCodeWithTheLibrary(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available (%v)", err)
	}
	deps := func(pkgs ...string) []string {
		out, err := exec.Command(goCmd, append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, out)
		}
		return strings.Fields(string(out))
	}
	const mod = "github.com/iamretry/iamretry/"
	for _, pkg := range deps("../iamtest") {
		rest, ok := strings.CutPrefix(pkg, mod)
		if ok && rest != "iamtest" && rest != "internal/vclock" {
			t.Errorf("iamtest imports %s: the fake shares no code with the library", pkg)
		}
	}
	for _, pkg := range deps("../codes/...", "../interceptor/...") {
		if pkg == mod+"iamtest" {
			t.Errorf("the library compiles %s", pkg)
		}
	}
}
