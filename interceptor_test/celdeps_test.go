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
