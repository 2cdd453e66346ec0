package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestApplyProgressLine: on a terminal, stderr carries one progress line,
// redrawn in place as resources start and finish, and cleared before any
// other line is written; the resource lines go to stdout as in a log.
func TestApplyProgressLine(t *testing.T) {
	var out, errb bytes.Buffer
	f := &applyFlags{transport: transportGRPC, parallel: 8}
	o := newApplyOutput(&cmdIO{stdout: &out, stderr: &errb}, f)
	o.term = true
	run := &applyRun{f: f, file: &applyFile{name: "f.yaml"}}
	for i, name := range []string{"projects/test-a", "projects/test-b"} {
		run.states = append(run.states, &resState{res: &applyResource{name: name, line: 2 + i}, index: i, outcome: outNotStarted})
	}
	o.begin(run)
	o.started(run, run.states[0])
	o.started(run, run.states[1])
	run.states[0].outcome, run.states[0].attempts, run.states[0].writes = outChanged, 1, 1
	o.finished(run, run.states[0])
	if got := errb.String(); !strings.HasSuffix(got, "\r\033[K[1/2] 1 changed, 1 under way") || !strings.Contains(got, "[0/2] 2 under way") {
		t.Errorf("progress line: %q", got)
	}
	run.states[1].outcome, run.states[1].attempts = outUnchanged, 1
	o.finished(run, run.states[1])
	if !strings.HasSuffix(errb.String(), "\r\033[K[2/2] 1 changed, 1 unchanged, 0 under way") {
		t.Errorf("progress line: %q", errb.String())
	}
	if !strings.Contains(out.String(), "projects/test-a: changed (+0 -0; 1 attempt, 1 write, ") || !strings.Contains(out.String(), "projects/test-b: unchanged") {
		t.Errorf("stdout:\n%s", out.String())
	}
}
