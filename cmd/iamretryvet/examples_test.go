package main

import (
	"go/ast"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/iamretry/iamretry/cmd/iamretryvet/analyzers"
)

// TestRepositoryExamples runs every analyzer over the repository's
// packages (tests included) and fails on a report inside an Example
// function: each Example shows a right way, so a report there is a false
// positive (or a wrong Example). Reports elsewhere (tests that misuse the
// library on purpose) are logged, not failed. It reads the module cache
// only (GOPROXY=off).
func TestRepositoryExamples(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{
		Mode:  packages.LoadAllSyntax,
		Dir:   root,
		Tests: true,
		Env:   append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOWORK=off"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		t.Fatalf("%d errors loading the repository's packages", n)
	}
	graph, err := checker.Analyze(analyzers.All, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	others := 0
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			t.Errorf("%s on %s: %v", act.Analyzer.Name, act.Package.PkgPath, act.Err)
			continue
		}
		for _, d := range act.Diagnostics {
			posn := act.Package.Fset.Position(d.Pos)
			if fn := exampleAt(act.Package, d.Pos); fn != "" {
				t.Errorf("%s: in %s: %s: %s", posn, fn, act.Analyzer.Name, d.Message)
			} else {
				others++
			}
		}
	}
	t.Logf("%d packages; %d reports outside Examples (tests that misuse the library on purpose)", len(pkgs), others)
}

// exampleAt names the Example function of pkg that holds pos, or "".
func exampleAt(pkg *packages.Package, pos token.Pos) string {
	for _, f := range pkg.Syntax {
		if pos < f.FileStart || pos >= f.FileEnd {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Example") &&
				fd.Pos() <= pos && pos < fd.End() {
				return fd.Name.Name
			}
		}
	}
	return ""
}
