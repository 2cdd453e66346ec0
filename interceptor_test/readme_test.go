package interceptor_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmePrelude declares, once for every snippet, the names the README's
// fragments use without declaring them (the context, the Retrier, the
// clients built in an earlier snippet).
const readmePrelude = `package readmesnippets

import (
	"context"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iam "google.golang.org/api/iam/v1"

	"github.com/iamretry/iamretry/interceptor"
)

var (
	ctx        context.Context
	r          *interceptor.Retrier
	client     *admin.IamClient
	req        *adminpb.GetServiceAccountRequest
	iamSvc     *iam.Service
	name       string
	syncGroups func(context.Context) error
)
`

// readmeImports are the packages a fragment may use without importing them,
// by the name it uses.
var readmeImports = map[string]string{
	"context":     `"context"`,
	"errors":      `"errors"`,
	"fmt":         `"fmt"`,
	"http":        `"net/http"`,
	"log":         `"log"`,
	"slog":        `"log/slog"`,
	"testing":     `"testing"`,
	"synctest":    `"testing/synctest"`,
	"time":        `"time"`,
	"admin":       `admin "cloud.google.com/go/iam/admin/apiv1"`,
	"adminpb":     `"cloud.google.com/go/iam/admin/apiv1/adminpb"`,
	"iamv2":       `iamv2 "cloud.google.com/go/iam/apiv2"`,
	"iampb":       `"cloud.google.com/go/iam/apiv1/iampb"`,
	"gax":         `"github.com/googleapis/gax-go/v2"`,
	"logging":     `"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"`,
	"sdkmetric":   `sdkmetric "go.opentelemetry.io/otel/sdk/metric"`,
	"iam":         `iam "google.golang.org/api/iam/v1"`,
	"crm":         `crm "google.golang.org/api/cloudresourcemanager/v3"`,
	"option":      `"google.golang.org/api/option"`,
	"grpc":        `"google.golang.org/grpc"`,
	"codes":       `"google.golang.org/grpc/codes"`,
	"status":      `"google.golang.org/grpc/status"`,
	"iamtest":     `"github.com/iamretry/iamretry/iamtest"`,
	"interceptor": `"github.com/iamretry/iamretry/interceptor"`,
	"policy":      `"github.com/iamretry/iamretry/interceptor/policy"`,
	"role":        `"github.com/iamretry/iamretry/interceptor/role"`,
	"deny":        `"github.com/iamretry/iamretry/interceptor/deny"`,
	"crmv3":       `"github.com/iamretry/iamretry/interceptor/policy/crmv3"`,
}

var (
	goFence   = regexp.MustCompile("(?ms)^```go\n(.*?)^```")
	qualifier = regexp.MustCompile(`\b([a-z][A-Za-z0-9]*)\.[A-Z]`)
)

// readmeSnippet turns the i-th ```go block of the README into a file of
// package readmesnippets: a whole program is kept as it is (its package
// renamed); a fragment has its imports kept, the ones it leaves out added
// (from readmeImports), and its statements wrapped in a function of their
// own, each variable they declare used once so that an unused one is not
// an error. Top-level declarations (func, type) stay at the top level. line
// is the README line src starts on: a //line directive makes the compiler's
// errors name README.md and its line.
func readmeSnippet(i int, src string, line int) (string, error) {
	at := func(s string) string { // the directive for the line s starts on
		n := line + strings.Count(src[:len(src)-len(s)], "\n")
		return fmt.Sprintf("//line README.md:%d\n", n)
	}
	if strings.HasPrefix(src, "package ") {
		_, rest, _ := strings.Cut(src, "\n")
		return "package readmesnippets\n" + at(rest) + rest, nil
	}
	// The fragment's own imports: a leading import block or lines.
	var own []string
	body := src
	for {
		body = strings.TrimLeft(body, "\n")
		if strings.HasPrefix(body, "import (") {
			block, rest, ok := strings.Cut(body, "\n)\n")
			if !ok {
				return "", fmt.Errorf("unclosed import block")
			}
			for _, l := range strings.Split(strings.TrimPrefix(block, "import ("), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					own = append(own, l)
				}
			}
			body = rest
			continue
		}
		if strings.HasPrefix(body, "import ") {
			line, rest, _ := strings.Cut(body, "\n")
			own = append(own, strings.TrimPrefix(line, "import "))
			body = rest
			continue
		}
		break
	}
	imports := slices.Clone(own)
	for _, m := range qualifier.FindAllStringSubmatch(body, -1) {
		spec, ok := readmeImports[m[1]]
		if !ok {
			continue
		}
		name := m[1]
		if slices.ContainsFunc(imports, func(s string) bool {
			return s == spec || strings.HasPrefix(s, name+" ") || strings.HasSuffix(strings.Trim(s, `"`), "/"+name)
		}) {
			continue
		}
		imports = append(imports, spec)
	}
	head := "package readmesnippets\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\n"
	if len(imports) == 0 {
		head = "package readmesnippets\n\n"
	}
	if strings.HasPrefix(body, "func ") || strings.HasPrefix(body, "type ") {
		return head + at(body) + body, nil
	}
	fn := fmt.Sprintf("func snippet%d() error {\n%s\n\treturn nil\n}\n", i, body)
	// Use every variable the fragment declares at its top level.
	f, err := parser.ParseFile(token.NewFileSet(), "", head+fn, 0)
	if err != nil {
		return "", err
	}
	var used []string
	for _, st := range f.Decls[len(f.Decls)-1].(*ast.FuncDecl).Body.List {
		var ids []*ast.Ident
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						ids = append(ids, id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					ids = append(ids, sp.(*ast.ValueSpec).Names...)
				}
			}
		}
		for _, id := range ids {
			if id.Name != "_" && !slices.Contains(used, id.Name) {
				used = append(used, id.Name)
			}
		}
	}
	uses := ""
	for _, n := range used {
		uses += "\t_ = " + n + "\n"
	}
	fn = fmt.Sprintf("func snippet%d() error {\n%s%s\n%s\treturn nil\n}\n", i, at(body), body, uses)
	return head + fn, nil
}

// TestREADMESnippetsCompile type-checks and vets every Go snippet of the
// README, offline: the snippets become the files of a package that exists
// only in a build overlay (nothing is written into the checkout), built
// against this module's own requirements from the module cache, with the
// test binary's race setting (under -race, the packages the test binary
// was built from are in the build cache already).
func TestREADMESnippetsCompile(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goFence.FindAllStringSubmatchIndex(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("found %d Go snippets in README.md; the fence is ```go", len(blocks))
	}
	tmp := t.TempDir()
	pkgDir := filepath.Join(root, "internal", "readmesnippets")
	overlay := map[string]string{}
	add := func(name, content string) {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(pkgDir, name)] = p
	}
	add("prelude.go", readmePrelude)
	for i, b := range blocks {
		src := string(readme[b[2]:b[3]])
		line := 1 + strings.Count(string(readme[:b[2]]), "\n")
		src, err := readmeSnippet(i, src, line)
		if err != nil {
			t.Fatalf("README.md:%d: the snippet does not parse once wrapped: %v", line, err)
		}
		add(fmt.Sprintf("snippet%d.go", i), src)
	}
	js, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovl := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovl, js, 0o644); err != nil {
		t.Fatal(err)
	}
	// Built as the test binary was (the race setting, and GOFLAGS kept):
	// the packages it shares with the test are in the build cache already.
	args := []string{"build", "-mod=readonly", "-overlay=" + ovl}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command(goCmd, append(args, "./internal/readmesnippets")...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README's Go snippets (positions are README.md's): %v\n%s", err, out)
	}
	t.Logf("%d Go snippets of README.md compile", len(blocks))

	// make lint sets IAMRETRYVET to a built cmd/iamretryvet: the snippets
	// show right ways, so it must report nothing on them. It runs on its
	// own (go vet runs a tool in the package's directory, which the overlay
	// does not create), over the same files in a module of their own in
	// tmp that requires this one (its go.mod, go.sum and a replace).
	if tool := os.Getenv("IAMRETRYVET"); tool != "" {
		vetSnippets(t, tool, root, overlay)
	}
}

// vetSnippets runs the iamretryvet binary tool over the README's snippet
// files (overlay: where they would be in the checkout -> their content's
// file) and fails on any report.
func vetSnippets(t *testing.T, tool, root string, overlay map[string]string) {
	mod := t.TempDir()
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod = []byte(strings.Replace(string(gomod), "module github.com/iamretry/iamretry\n", "module readmesnippets\n", 1) +
		"\nrequire github.com/iamretry/iamretry v0.0.0-00010101000000-000000000000\n\nreplace github.com/iamretry/iamretry => " + root + "\n")
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"go.mod": gomod, "go.sum": gosum}
	for dst, src := range overlay {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(dst)] = b
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(mod, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(tool, "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("iamretryvet on the README's Go snippets (positions are README.md's): %v\n%s", err, out)
	}
	t.Logf("iamretryvet reports nothing on them")
}
