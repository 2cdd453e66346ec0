package main

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	r := runCmd(t, "--version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "iamretry ") || !strings.Contains(r.stdout, "(go1.") {
		t.Errorf("--version: exit %d, %q", r.code, r.stdout)
	}
}

// TestHelpWritesFlagsAsUsageDoes: the flags of every command are listed
// with two dashes, as the usage lines and the long texts write them.
func TestHelpWritesFlagsAsUsageDoes(t *testing.T) {
	for _, args := range [][]string{{"demo", "-h"}, {"simulate", "-h"}, {"fake-server", "-h"}, {"policy", "get", "-h"}, {"policy", "add-binding", "-h"}} {
		r := runCmd(t, args...)
		_, flags, ok := strings.Cut(r.stdout, "\nFlags:\n")
		if r.code != exitOK || !ok {
			t.Errorf("%v: exit %d, no flags:\n%s", args, r.code, r.stdout)
			continue
		}
		for _, l := range strings.Split(strings.TrimSpace(flags), "\n") {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
				t.Errorf("%v: flag written with one dash: %q", args, l)
			}
		}
	}
}

// TestPolicyNoOpSaysNothingWritten: a grant already there and a revoke of
// what is not there write nothing, and say so.
func TestPolicyNoOpSaysNothingWritten(t *testing.T) {
	addr := startFake(t)
	ep := []string{"--endpoint", addr, "--insecure", "--resource", "projects/noop", "--role", "roles/viewer", "--member", "user:alice@example.com"}
	for _, c := range []struct{ sub, want string }{
		{"add-binding", "grant roles/viewer to user:alice@example.com: done"},
		{"add-binding", "grant roles/viewer to user:alice@example.com: already present, nothing written"},
		{"remove-binding", "revoke roles/viewer from user:alice@example.com: done"},
		{"remove-binding", "revoke roles/viewer from user:alice@example.com: not present, nothing written"},
	} {
		r := runCmd(t, append([]string{"policy", c.sub}, ep...)...)
		if r.code != exitOK || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%s: exit %d, want %q:\n%s%s", c.sub, r.code, c.want, r.stdout, r.stderr)
		}
	}
}
