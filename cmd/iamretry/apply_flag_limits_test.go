package main

import (
	"strings"
	"testing"
)

// TestApplyFlagExtremes: --parallel, --deadline and --grace at and past
// their ends are refused with exit 2 and an error naming the flag, before
// any file is read.
func TestApplyFlagExtremes(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--parallel", "0"}, "--parallel 0: must be at least 1"},
		{[]string{"--parallel", "-1"}, "--parallel -1: must be at least 1"},
		{[]string{"--parallel", "-9223372036854775808"}, "must be at least 1"},
		{[]string{"--parallel", "99999999999999999999"}, "parallel"},
		{[]string{"--parallel", "1e3"}, "parallel"},
		{[]string{"--deadline", "-1ns"}, "--deadline -1ns: must not be negative"},
		{[]string{"--deadline", "-5m"}, "must not be negative"},
		{[]string{"--deadline", "9999999999h"}, "deadline"},
		{[]string{"--deadline", "5"}, "deadline"}, // no unit
		{[]string{"--grace", "-1s"}, "--grace -1s: must not be negative"},
		// The hidden test flag: a scale whose clock overflows (Now would
		// run backwards, or the deadline vanish) is refused too.
		{[]string{"--time-scale", "+Inf"}, "--time-scale +Inf"},
		{[]string{"--time-scale", "1e300"}, "--time-scale 1e+300"},
		{[]string{"--time-scale", "NaN"}, "--time-scale NaN"},
	} {
		args := append([]string{"apply", "-f", "/nonexistent/never-read.yaml"}, c.args...)
		r := runCmd(t, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
		if strings.Contains(r.stderr, "no such file") {
			t.Errorf("%q: the file was read before the flags were checked:\n%s", c.args, r.stderr)
		}
	}
}

// TestApplyParallelHugeAndDeadlineZero: a --parallel far above the number
// of resources starts one worker a resource (not a billion), and
// --deadline 0 (until stopped) converges through faults.
func TestApplyParallelHugeAndDeadlineZero(t *testing.T) {
	t.Parallel() // its own fake-server process and files
	fake := startFakeProc(t, "--fail-rate", "0.5", "--seed", "3")
	file := "resources:\n"
	for _, p := range []string{"a", "b", "c"} {
		file += "  - {resource: projects/test-huge" + p + ", add: [{role: roles/viewer, member: \"user:a@example.com\"}]}\n"
	}
	path := writeTemp(t, "huge.yaml", file)
	r := applyProc(t, "", append([]string{"apply", "-f", path, "--parallel", "9223372036854775807", "--deadline", "0"}, fake.grpcEP()...)...)
	if r.code != exitOK {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Count(r.stdout, ": changed") != 3 {
		t.Fatalf("want 3 changed:\n%s", r.stdout)
	}
}
