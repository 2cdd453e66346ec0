package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
)

// TestDemoFailsWhenAStepMisbehaves: a call that ends otherwise than the
// guidance says, and a step that cannot run to its end, fail the demo.
func TestDemoFailsWhenAStepMisbehaves(t *testing.T) {
	saved := storySteps
	t.Cleanup(func() { storySteps = saved })
	storySteps = func() []demoStep {
		steps := demoSteps()[:1]
		return append(steps,
			demoStep{n: 8, title: "a call that ends otherwise", story: "sabotage",
				run: func(ctx context.Context, d *demo, s *stepState) error {
					_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
					d.returned(s, "", "GetIamPolicy", err, codes.Unavailable) // it succeeds
					s.outcome = "broken"
					return nil
				}},
			demoStep{n: 9, title: "a step that stops", story: "stops",
				run: func(context.Context, *demo, *stepState) error { return errors.New("no way on") }})
	}
	r := runCmd(t, "demo")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d", r.code, exitFailure)
	}
	for _, want := range []string{
		"→ GetIamPolicy returned OK (the guidance says it ends UNAVAILABLE)", "✗ broken",
		"» the step could not run to its end: no way on",
		"  8     sabotage", "  9     stops", "FAIL\n", "FAIL: 2 of 3 steps",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}
