package main

// The apply file parser against hostile and odd files: size, aliases that
// expand (billion laughs), deep nesting, unicode, and one resource spelt
// two ways. Parsed in process: no server, no process.

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// allocDuring returns the bytes f allocates.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// aliasBomb is a small file whose resources each alias one list of
// grants: n resources × n grants once expanded.
func aliasBomb(n int, member string) string {
	var b strings.Builder
	b.WriteString("resources:\n  - resource: projects/test-p0\n    add: &g\n")
	for i := range n {
		fmt.Fprintf(&b, "      - {role: roles/r%d, member: %q}\n", i, member)
	}
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {resource: projects/test-p%d, add: *g}\n", i)
	}
	return b.String()
}

// TestApplyFileAliasExpansionBounded: a file of a few hundred kilobytes
// whose aliases expand to millions of grants is refused with an error that
// says so, without the work (or the memory, or the millions of error
// lines) of the expansion.
func TestApplyFileAliasExpansionBounded(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, c := range []struct{ name, member string }{
		{"valid grants", "user:a@example.com"},
		{"invalid grants", "usr:a@example.com"}, // one error per expanded grant
	} {
		t.Run(c.name, func(t *testing.T) {
			file := aliasBomb(3000, c.member) // 9,000,000 grants expanded
			t.Logf("file: %d bytes", len(file))
			var err error
			alloc := allocDuring(func() { _, err = parseApplyFile("bomb.yaml", strings.NewReader(file), transportGRPC) })
			if err == nil {
				t.Fatal("an alias bomb was accepted")
			}
			if alloc > 512<<20 {
				t.Fatalf("parsing allocated %d MiB", alloc>>20)
			}
			var fe *fileErrors
			// At most one error per grant written (3000) and per grant the
			// bound lets through aliases, and the bound's own.
			if !errors.As(err, &fe) || len(fe.errs) > 3000+maxApplyAliasedGrants+1 {
				t.Fatalf("want bounded errors, got %T with %d", err, len(fe.errs))
			}
			if !strings.Contains(err.Error(), "alias") {
				t.Fatalf("the error does not say the aliases expand too far:\n%.500s", err)
			}
		})
	}
}

// TestApplyFileAliasesWithinReason: a grant list shared by a few resources
// through an alias is still accepted.
func TestApplyFileAliasesWithinReason(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	f, err := parseApplyFile("ok.yaml", strings.NewReader(aliasBomb(20, "user:a@example.com")), transportGRPC)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.resources) != 20 || len(f.resources[19].add) != 20 {
		t.Fatalf("%d resources", len(f.resources))
	}
}

// TestApplyFileBillionLaughs: the classic bomb, nested aliases of lists,
// anywhere in the file, is refused without expanding it.
func TestApplyFileBillionLaughs(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	var b strings.Builder
	b.WriteString("resources:\n  - resource: projects/test-p\n    add: &l0 [{role: roles/viewer, member: allUsers}]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "  - &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	var err error
	alloc := allocDuring(func() { _, err = parseApplyFile("laughs.yaml", strings.NewReader(b.String()), transportGRPC) })
	if err == nil {
		t.Fatal("accepted")
	}
	if alloc > 64<<20 {
		t.Fatalf("parsing allocated %d MiB", alloc>>20)
	}
	if len(err.Error()) > 64<<10 {
		t.Fatalf("%d bytes of errors", len(err.Error()))
	}
}

// endless is a reader of comment lines that never ends; it counts what was
// read.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	const line = "# a comment line of a file that never ends\n"
	if e.n > 1<<30 {
		return 0, io.ErrUnexpectedEOF // the test's own bound
	}
	n := 0
	for n+len(line) <= len(p) {
		n += copy(p[n:], line)
	}
	if n == 0 {
		n = copy(p, line)
	}
	e.n += int64(n)
	return n, nil
}

// TestApplyFileSizeBounded: a file (or stdin) that does not end is refused
// once past a bound, with an error naming the bound, not read into memory
// until the machine runs out.
func TestApplyFileSizeBounded(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	e := &endless{}
	_, err := parseApplyFile("<stdin>", e, transportGRPC)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v", err)
	}
	if e.n > 64<<20 {
		t.Fatalf("read %d MiB before refusing", e.n>>20)
	}
}

// TestApplyFileDeepNesting: nesting deeper than any schema is an error
// with a line, not a stack overflow.
func TestApplyFileDeepNesting(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, file := range []string{
		"resources: " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n",
		"resources:\n  - resource: projects/test-p\n    add:\n" + strings.Repeat("      - ", 1) + strings.Repeat("{a: ", 50000) + "b" + strings.Repeat("}", 50000) + "\n",
	} {
		_, err := parseApplyFile("deep.yaml", strings.NewReader(file), transportGRPC)
		if err == nil {
			t.Fatal("accepted")
		}
	}
}

// TestApplyFileUnicode: non-ASCII anywhere gets a clear error or goes
// through as written, never a crash; a BOM-led file parses.
func TestApplyFileUnicode(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, c := range []struct{ file, want string }{
		{"\ufeffresources:\n  - {resource: projects/test-p, add: [{role: roles/viewer, member: allUsers}]}\n", ""},
		{"resources:\n  - {resource: projects/test-p, add: [{role: roles/viewer, member: \"user:älice@exämple.com\"}]}\n", ""},
		{"resources:\n  - {resource: projects/test-p, add: [{role: rôles/viewer, member: allUsers}]}\n", "a role is roles/NAME"},
		{"resources:\n  - {resource: prøjects/p, add: [{role: roles/viewer, member: allUsers}]}\n", "must be letters and digits"},
		{"résources: []\n", `unknown key "résources"`},
		{"resources:\n  - {resource: \"projects/test-p\u00a0\", add: [{role: roles/viewer, member: allUsers}]}\n", "cannot be a project"},
		{"\xff\xfe\x00r\x00e", "must be a mapping"}, // UTF-16, read as such
	} {
		_, err := parseApplyFile("u.yaml", strings.NewReader(c.file), transportGRPC)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.file, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: err %v, want %q", c.file, err, c.want)
		}
	}
}

// TestApplyFileOneResourceTwoSpellings: a resource listed twice under two
// spellings of its name is refused like one listed twice: two Updaters on
// one policy would race each other (and a plan would show it twice).
func TestApplyFileOneResourceTwoSpellings(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	const g = ", add: [{role: roles/viewer, member: allUsers}]}\n"
	for _, pair := range [][2]string{
		{"projects/test-p", "//cloudresourcemanager.googleapis.com/projects/test-p"},
		{"folders/1", "//cloudresourcemanager.googleapis.com/folders/1"},
		{"projects/test-p/serviceAccounts/sa@p.iam.gserviceaccount.com", "//iam.googleapis.com/projects/test-p/serviceAccounts/sa@p.iam.gserviceaccount.com"},
		// IAM reads "-" as the project of the account's email.
		{"projects/test-p/serviceAccounts/sa@p.iam.gserviceaccount.com", "projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com"},
		{"projects/-/serviceAccounts/123456789", "//iam.googleapis.com/projects/test-p/serviceAccounts/123456789"},
	} {
		file := "resources:\n  - {resource: " + pair[0] + g + "  - {resource: " + pair[1] + g
		_, err := parseApplyFile("dup.yaml", strings.NewReader(file), transportGRPC)
		if err == nil || !strings.Contains(err.Error(), "listed twice") {
			t.Errorf("%s and %s: err %v, want listed twice", pair[0], pair[1], err)
		}
	}
}
