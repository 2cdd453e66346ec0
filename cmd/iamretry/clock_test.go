package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
)

// TestDemoFailsWhenAStepMisbehaves: a step that reports no call, and a step
// that cannot run to its end, fail the demo. (Whether each call ends as the
// guidance says is the tests' to check, from demo --json: TestDemoClaims.)
func TestDemoFailsWhenAStepMisbehaves(t *testing.T) {
	saved := storySteps
	t.Cleanup(func() { storySteps = saved })
	storySteps = func() []demoStep {
		steps := demoSteps()[:1]
		return append(steps,
			demoStep{n: 8, title: "a call that is not reported", story: "sabotage",
				run: func(ctx context.Context, d *demo, s *stepState) error {
					_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
					s.outcome = "broken" // and no d.returned
					return err
				}},
			demoStep{n: 9, title: "a step that stops", story: "stops",
				run: func(context.Context, *demo, *stepState) error { return errors.New("no way on") }})
	}
	r := runCmd(t, "demo")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d", r.code, exitFailure)
	}
	for _, want := range []string{
		"✗ broken",
		"» the step could not run to its end: no way on",
		"  8     sabotage", "  9     stops", "FAIL\n", "FAIL: 2 of 3 steps",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}
