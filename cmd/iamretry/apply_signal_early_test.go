package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestApplySignalBeforeAnyCall: a signal that came before the first call
// (while the file was parsed, or the client dialled) ends the run with the
// signal's exit code; every resource is reported not started; nothing
// waits on the unreachable endpoint.
func TestApplySignalBeforeAnyCall(t *testing.T) {
	path := writeTemp(t, "early.yaml", "resources:\n  - {resource: projects/test-e1, add: [{role: roles/viewer, member: \"user:a@example.com\"}]}\n  - {resource: projects/test-e2, add: [{role: roles/viewer, member: \"user:a@example.com\"}]}\n")
	for _, transport := range []string{"grpc", "rest"} {
		for _, extra := range [][]string{nil, {"--dry-run"}, {"--json"}} {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errors.New("interrupt signal received"))
			ep := []string{"--endpoint", "127.0.0.1:1", "--insecure"}
			if transport == "rest" {
				ep = []string{"--transport", "rest", "--endpoint", "http://127.0.0.1:1", "--insecure"}
			}
			start := time.Now()
			r := runCmdCtx(t, ctx, append(append([]string{"apply", "-f", path}, ep...), extra...)...)
			if r.code != 130 {
				t.Errorf("%s %v: exit %d, want 130:\n%s%s", transport, extra, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "not started") && !strings.Contains(r.stdout, "not_started") && !strings.Contains(r.stdout, "notStarted") {
				t.Errorf("%s %v: the resources are not reported as not started:\n%s", transport, extra, r.stdout)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("%s %v: took %v", transport, extra, el)
			}
		}
	}
}
