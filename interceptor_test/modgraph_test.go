package interceptor_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plotStack are module paths the CLI's simulator and plot need and the
// library must never hand its users: a service that imports interceptor
// would find them in its go.sum, its SBOM and its licence scans.
var plotStack = []string{"gonum.org/", "go-fonts", "go-pdf/fpdf", "ajstarks/svgo", "golang/freetype", "go-latex", "sbinet/gg", "golang.org/x/image"}

// vetStack are the packages only cmd/iamretryvet compiles: a consumer of
// the library builds none of them (x/tools may sit in its module graph,
// required by a dependency's go.mod, but no package of it is compiled).
var vetStack = []string{"golang.org/x/tools/", "github.com/golangci/"}

// TestConsumerModuleGraphIsLight builds a scratch module that imports
// interceptor and interceptor/policy, with a replace to this checkout, and
// checks that its "go list -m all" holds none of the plot stack (the CLI
// keeps it in a module of its own) and that it compiles no package of the
// vet tool's stack.
func TestConsumerModuleGraphIsLight(t *testing.T) {
	t.Parallel()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go command is not available (%v): cannot build a consumer module", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the checkout root %s: %v", root, err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/consumer\n\ngo 1.26.0\n\n" +
			"require github.com/iamretry/iamretry v0.0.0-00010101000000-000000000000\n\n" +
			"replace github.com/iamretry/iamretry => " + root + "\n",
		"main.go": "package main\n\nimport (\n" +
			"\t_ \"github.com/iamretry/iamretry/interceptor\"\n" +
			"\t_ \"github.com/iamretry/iamretry/interceptor/policy\"\n)\n\nfunc main() {}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goCmd, "list", "-m", "all")
	cmd.Dir = dir
	// GOPROXY and the module cache are the environment's; -mod=mod lets the
	// go command write the consumer's go.sum.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m all in the consumer module: %v\n%s", err, out)
	}
	mods := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("the consumer's go list -m all: %d modules", len(mods))
	for _, m := range mods {
		for _, bad := range plotStack {
			if strings.Contains(m, bad) {
				t.Errorf("the consumer's module graph holds %q: the library's go.mod requires a module only the CLI needs", m)
			}
		}
	}
	cmd = exec.Command(goCmd, "list", "-deps", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps in the consumer module: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range vetStack {
			if strings.HasPrefix(p, bad) {
				t.Errorf("the consumer compiles %s: only cmd/iamretryvet may", p)
			}
		}
	}
}
