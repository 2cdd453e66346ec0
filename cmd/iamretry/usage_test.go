package main

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

func TestUsageErrors(t *testing.T) {
	pol := []string{"--endpoint", "127.0.0.1:9", "--insecure"}
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "no command given"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"help", "bogus"}, `unknown command "bogus"`},
		{[]string{"demo", "extra"}, `unexpected argument "extra"`},
		{[]string{"demo", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"demo", "--rtt", "-1s"}, "--rtt -1s: must not be negative"},
		{[]string{"simulate", "--clients", "0"}, "--clients 0: must be between 1 and"},
		{[]string{"simulate", "--clients", "x"}, `invalid value "x" for flag -clients`},
		{[]string{"simulate", "--capacity", "-5"}, "--capacity -5: must not be negative"},
		{[]string{"simulate", "--outage", "-1s"}, "--outage -1s: must not be negative"},
		{[]string{"simulate", "--max-backoff", "100ms"}, "--max-backoff 100ms: must be at least the first wait"},
		{[]string{"simulate", "--plot", "herd.jpg"}, `--plot "herd.jpg": the file must end in .png or .svg`},
		{[]string{"fake-server", "--fail-rate", "-0.1"}, "--fail-rate -0.1: a rate is a probability between 0 and 1"},
		{[]string{"fake-server", "--fail-rate", "1.5"}, "--fail-rate 1.5: a rate is a probability between 0 and 1"},
		{[]string{"fake-server", "--lost-answer-rate", "2"}, "--lost-answer-rate 2: a rate is a probability"},
		{[]string{"fake-server", "--codes", "UNAVAILABLE,BOGUS"}, `--codes: unknown gRPC code "BOGUS"; use one of CANCELLED,`},
		{[]string{"fake-server", "--codes", "14"}, `unknown gRPC code "14"`},
		{[]string{"fake-server", "--codes", "ok"}, "--codes: OK is not a failure"},
		{[]string{"fake-server", "--codes", "UNAVAILABLE,"}, "empty code name"},
		{[]string{"fake-server", "--latency", "-1ms"}, "--latency -1ms: must not be negative"},
		{[]string{"fake-server", "--listen", "8085"}, `--listen "8085": want host:port`},
		{[]string{"fake-server", "--listen", "127.0.0.1:99999"}, "the port must be a number from 0 to 65535"},
		{[]string{"policy"}, "missing subcommand"},
		{[]string{"policy", "set"}, `unknown subcommand "set"`},
		{[]string{"policy", "get"}, "--resource is required"},
		{[]string{"policy", "get", "--resource", "projects"}, `--resource "projects": expected collection/ID pairs`},
		{[]string{"policy", "get", "--resource", "projects//x/y"}, "empty path segment"},
		{[]string{"policy", "get", "--resource", "Projects/p"}, "must start with a lower-case letter"},
		{[]string{"policy", "get", "--resource", "projects/p q"}, "must not contain white space"},
		{[]string{"policy", "get", "--resource", "//storage.googleapis.com/projects/_/buckets/b"}, "does not reach storage.googleapis.com"},
		{[]string{"policy", "get", "--resource", "projects/p/topics/t"}, "give the full resource name, //SERVICE/projects/p/topics/t"},
		{[]string{"policy", "get", "--resource", "project/p"}, `--resource "project/p": did you mean projects/p?`},
		{[]string{"policy", "get", "--resource", "projects/p/serviceAcounts/a@p.iam.gserviceaccount.com"}, "did you mean projects/p/serviceAccounts/a@p.iam.gserviceaccount.com?"},
		{[]string{"policy", "get", "--resource", "projects/p", "--insecure"}, "--insecure turns off TLS and credentials for --endpoint"},
		{[]string{"policy", "get", "--resource", "projects/p", "--endpoint", "localhost"}, `--endpoint "localhost": want HOST:PORT`},
		{[]string{"policy", "get", "--resource", "projects/p", "--role", "roles/viewer"}, "flag provided but not defined: -role"},
		{[]string{"policy", "get", "--resource", "projects/p", "--timeout", "-1s"}, "--timeout -1s: must not be negative"},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--member", "user:a@example.com"}, pol...), "--role is required"},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "viewer", "--member", "user:a@example.com"}, pol...), `--role "viewer": a role is roles/NAME`},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer"}, pol...), "--member is required"},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "alice@example.com"}, pol...), `--member "alice@example.com": no principal kind prefix`},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "person:alice@example.com"}, pol...), `unknown principal kind "person:"`},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "user:alice"}, pol...), "the value after user: must be an email address"},
		{append([]string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "user:a@example.com", "--condition-title", "t"}, pol...), "a condition needs both --condition-title and --condition-expression"},
		{append([]string{"policy", "remove-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "domain:@x"}, pol...), "the value after domain: must be a domain name"},
	} {
		r := runCmd(t, tc.args...)
		if r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, r.code, exitUsage, r.stderr)
			continue
		}
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: stderr %q, want it to contain %q", tc.args, r.stderr, tc.want)
		}
		if !strings.Contains(r.stderr, "Run 'iamretry") && !strings.Contains(r.stderr, "try 'iamretry") {
			t.Errorf("%q: stderr %q does not say what to do", tc.args, r.stderr)
		}
		if r.stdout != "" && len(tc.args) > 0 {
			t.Errorf("%q: a usage error wrote to stdout: %q", tc.args, r.stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	r := runCmd(t, "help")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("help: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, c := range []string{"demo", "simulate", "fake-server", "policy"} {
		if !strings.Contains(r.stdout, "\n  "+c+" ") {
			t.Errorf("help does not list %s:\n%s", c, r.stdout)
		}
	}
	for _, tc := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"demo", "-h"}, []string{"iamretry demo [", "-real-time", "-json", "-seed"}},
		{[]string{"help", "demo"}, []string{"iamretry demo ["}},
		{[]string{"simulate", "--help"}, []string{"-clients", "-outage", "-capacity", "-deadline", "-max-backoff", "-seed", "-plot", "-contention"}},
		{[]string{"fake-server", "-h"}, []string{"-listen", "-fail-rate", "-codes", "-lost-answer-rate", "-latency", "-propagation", "-seed", "SIGTERM"}},
		{[]string{"policy", "-h"}, []string{"add-binding", "remove-binding", "Application Default Credentials"}},
		{[]string{"policy", "get", "-h"}, []string{"-resource", "-endpoint", "-insecure", "-deadline", "-timeout"}},
		{[]string{"help", "policy", "add-binding"}, []string{"-role", "-member", "-condition-title", "-condition-expression", "-dry-run"}},
	} {
		r := runCmd(t, tc.args...)
		if r.code != exitOK || r.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", tc.args, r.code, r.stderr)
		}
		for _, w := range tc.wants {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%q: help lacks %q:\n%s", tc.args, w, r.stdout)
			}
		}
	}
}

// TestCodeNames: the names the CLI writes and parses (genproto's
// google.rpc.Code) are the ones grpc's own table parses, for every code.
func TestCodeNames(t *testing.T) {
	for i := codes.OK; i <= codes.Unauthenticated; i++ {
		n := codeName(i)
		var byGRPC codes.Code
		if err := byGRPC.UnmarshalJSON([]byte(`"` + n + `"`)); err != nil || byGRPC != i {
			t.Errorf("codeName(%d) = %q, which grpc parses as %v, %v", i, n, byGRPC, err)
		}
		for _, s := range []string{n, strings.ToLower(n), " " + n + " "} {
			c, err := codeByName(s)
			if err != nil || c != i {
				t.Errorf("codeByName(%q) = %v, %v; want %v", s, c, err, i)
			}
		}
	}
	if n := codeName(codes.Code(99)); n != "Code(99)" {
		t.Errorf("codeName(99) = %q", n)
	}
	for _, bad := range []string{"", "Unavailable2", "14", "UNAVAILABLE,INTERNAL", "NOPE"} {
		if _, err := codeByName(bad); err == nil {
			t.Errorf("codeByName(%q) accepted", bad)
		}
	}
	cs, err := parseFailureCodes("codes", "unavailable,Internal,DEADLINE_EXCEEDED")
	if err != nil || len(cs) != 3 || cs[0] != codes.Unavailable || cs[1] != codes.Internal || cs[2] != codes.DeadlineExceeded {
		t.Errorf("parseFailureCodes: %v, %v", cs, err)
	}
}

func TestCheckMemberAccepts(t *testing.T) {
	for _, m := range []string{
		"user:alice@example.com", "serviceAccount:sa@p.iam.gserviceaccount.com", "group:ops@example.com",
		"domain:example.com", "allUsers", "allAuthenticatedUsers",
		"principal://iam.googleapis.com/locations/global/workforcePools/p/subject/s",
		"principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/*",
		"deleted:user:alice@example.com?uid=123",
	} {
		if err := checkMember(m); err != nil {
			t.Errorf("checkMember(%q): %v", m, err)
		}
	}
	for _, r := range []string{"roles/viewer", "projects/p/roles/custom", "organizations/1/roles/custom"} {
		if err := checkRole(r); err != nil {
			t.Errorf("checkRole(%q): %v", r, err)
		}
	}
	for _, r := range []string{"projects/p", "folders/1", "organizations/1", "projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com", "projects/p/locations/l/keyRings/k"} {
		if err := checkResource(r); err != nil {
			t.Errorf("checkResource(%q): %v", r, err)
		}
	}
}
