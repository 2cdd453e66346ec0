package main

import (
	"context"
	"strings"
	"testing"
)

func TestDemoFailsWhenAStepMisbehaves(t *testing.T) {
	saved := storySteps
	t.Cleanup(func() { storySteps = saved })
	storySteps = func() []demoStep {
		steps := demoSteps()[:1]
		return append(steps, demoStep{n: 9, title: "a step that fails", story: "sabotage",
			run: func(ctx context.Context, d *demo, s *stepState) error {
				s.outcome = "broken"
				s.expect(false, "this check fails")
				return nil
			}})
	}
	r := runCmd(t, "demo")
	if r.code != exitFailure {
		t.Errorf("exit %d, want %d", r.code, exitFailure)
	}
	for _, want := range []string{"✗ this check fails", "  9     sabotage", "FAIL\n", "FAIL: 1 of 2 steps"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}
