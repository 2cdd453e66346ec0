package main

import (
	"strings"
	"testing"
)

// TestApplyFileOddPaths: -f naming a directory, or an endless device, is
// bad input: exit 2 with an error naming the file, nothing sent.
func TestApplyFileOddPaths(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	dir := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{dir, dir},
		{"/dev/zero", "larger than"},
	} {
		r := runCmd(t, "apply", "-f", c.path, "--endpoint", "127.0.0.1:1", "--insecure")
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("-f %s: exit %d, want 2 and %q:\n%s", c.path, r.code, c.want, r.stderr)
		}
	}
}
