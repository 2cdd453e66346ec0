package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

// TestApplyOutputSilentAfterSummary: the Updater may still end an attempt
// of a resource the run abandoned after the run has printed its summary
// and returned (its batch runs on a goroutine of its own); the observer's
// late report must not write to stdout or stderr any more (in process: a
// data race with the caller reading them; on a terminal: a line after the
// summary).
func TestApplyOutputSilentAfterSummary(t *testing.T) {
	var out, errb bytes.Buffer
	f := &applyFlags{transport: transportGRPC, parallel: 8}
	o := newApplyOutput(&cmdIO{stdout: &out, stderr: &errb}, f)
	run := &applyRun{f: f, file: &applyFile{name: "f.yaml"}}
	o.begin(run)
	o.summary(run, time.Second, context.Background())
	n, m := out.Len(), errb.Len()
	o.retry("projects/test-late", interceptor.Attempt{N: 1, Reason: interceptor.Retry, Method: "iamretry.policy/Update", Wait: time.Second})
	if out.Len() != n || errb.Len() != m {
		t.Fatalf("written after the summary: stdout +%d, stderr %q", out.Len()-n, errb.String()[m:])
	}
}
