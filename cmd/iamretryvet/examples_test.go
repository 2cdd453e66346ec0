package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRepositoryExamples runs iamretryvet over the repository's packages
// (tests included) and fails on a report inside an Example function: each
// Example shows a right way, so a report there is a false positive (or a
// wrong Example). Reports elsewhere (tests that misuse the library on
// purpose) are counted, not failed. It reads the module cache only.
func TestRepositoryExamples(t *testing.T) {
	if tool == "" {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	fset := token.NewFileSet()
	others := 0
	for _, byAnalyzer := range runJSON(t, root, "./...") {
		for name, reports := range byAnalyzer {
			for _, r := range reports {
				file, line, err := fileLine(r.Posn)
				if err != nil {
					t.Fatalf("%s: %v", r.Posn, err)
				}
				f, ok := files[file]
				if !ok {
					if f, err = parser.ParseFile(fset, file, nil, parser.SkipObjectResolution); err != nil {
						t.Fatal(err)
					}
					files[file] = f
				}
				if fn := exampleAt(fset, f, line); fn != "" {
					t.Errorf("%s: in %s: %s: %s", r.Posn, fn, name, r.Message)
				} else {
					others++
				}
			}
		}
	}
	t.Logf("%d reports outside Examples (tests that misuse the library on purpose)", others)
}

// fileLine splits a "file:line:col" position.
func fileLine(posn string) (string, int, error) {
	rest, _, _ := cutLast(posn) // the column
	file, line, _ := cutLast(rest)
	n, err := strconv.Atoi(line)
	return file, n, err
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// exampleAt names the Example function of f that holds line, or "".
func exampleAt(fset *token.FileSet, f *ast.File, line int) string {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Example") {
			continue
		}
		if fset.Position(fd.Pos()).Line <= line && line <= fset.Position(fd.End()).Line {
			return fd.Name.Name
		}
	}
	return ""
}
