package main

import (
	"strings"
	"testing"
)

// Flag extremes of policy, fake-server and simulate: each is a usage error
// (exit 2) that names the flag, never a panic or a silent default: a flag
// given twice (the flag package would keep the last one without a word, and
// add-binding would grant only the second member) and simulate --seeds
// without --contention (it would be ignored) included. policy --deadline 0
// is no retry deadline of its own: --timeout or Ctrl-C end the command.
func TestFlagExtremes(t *testing.T) {
	pol := []string{"--endpoint", "127.0.0.1:9", "--insecure"}
	add := []string{"policy", "add-binding", "--resource", "projects/p", "--role", "roles/viewer", "--member", "user:a@example.com"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"policy", "get", "--resource", "projects/p", "--deadline", "-1s"}, pol...), "--deadline -1s"},
		{append([]string{"policy", "get", "--resource", "projects/p", "--deadline", "9999999h"}, pol...), "-deadline"},
		{append([]string{"policy", "get", "--resource", "projects/p", "--timeout", "-9223372036854775807ns"}, pol...), "--timeout"},
		{append(append([]string{}, add...), append([]string{"--condition-expression", "x"}, pol...)...), "--condition-title"},
		{append(append([]string{}, add...), append([]string{"--condition-description", "d"}, pol...)...), "--condition-description"},
		{append(append([]string{}, add...), append([]string{"--bogus"}, pol...)...), "-bogus"},
		{[]string{"fake-server", "--rest-listen", "8086"}, "--rest-listen"},
		{[]string{"fake-server", "--rest-listen", "127.0.0.1:70000"}, "--rest-listen"},
		{[]string{"fake-server", "--listen", ""}, "--listen"},
		{[]string{"fake-server", "--propagation", "-1s"}, "--propagation"},
		{[]string{"fake-server", "--propagation-reads", "-1"}, "--propagation-reads"},
		{[]string{"fake-server", "--fail-rate", "NaN"}, "--fail-rate"},
		{[]string{"fake-server", "--lost-answer-rate", "Inf"}, "--lost-answer-rate"},
		{[]string{"fake-server", "--seed", "x"}, "-seed"},
		{[]string{"simulate", "--clients", "100000000"}, "--clients"},
		{[]string{"simulate", "--clients", "-1"}, "--clients"},
		{[]string{"simulate", "--outage", "9999999h"}, "-outage"},
		{[]string{"simulate", "--outage", "2562047h"}, "--outage"},
		{[]string{"simulate", "--deadline", "-1s"}, "--deadline"},
		{[]string{"simulate", "--seeds", "0"}, "--seeds"},
		{[]string{"simulate", "--seeds", "1001", "--contention"}, "--seeds"},
		{[]string{"simulate", "--max-backoff", "-1s"}, "--max-backoff"},
		{append(append([]string{}, add...), append([]string{"--member", "user:b@example.com"}, pol...)...), "-member"},
		{append(append([]string{}, add...), append([]string{"--resource", "projects/q"}, pol...)...), "-resource"},
		{append([]string{"policy", "get", "--resource", "projects/p", "--insecure"}, pol...), "flag insecure: given more than once"},
		{[]string{"fake-server", "--fail-rate", "0.1", "--fail-rate", "0.2"}, "-fail-rate"},
		{[]string{"simulate", "--seeds", "5"}, "--seeds 5: applies only with --contention"},
		{[]string{"simulate", "--seed", "-1"}, "-seed"},
	} {
		r := runCmd(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d naming %s", tc.args, r.code, r.stderr, exitUsage, tc.want)
		}
	}
}
