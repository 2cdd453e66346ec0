package interceptor_test

import (
	"context"
	"testing"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
)

// TestLoggerContextEndedOnTransientGivesUp: a transient failure whose
// caller's context ended during the attempt is a give-up (the gave_up
// instrument and span event count it): the log says so at Warn, as for
// every give-up, not "not retried" at Debug.
func TestLoggerContextEndedOnTransientGivesUp(t *testing.T) {
	t.Parallel()
	var level logging.Level
	var msg string
	l := logging.LoggerFunc(func(_ context.Context, lv logging.Level, m string, _ ...any) { level, msg = lv, m })
	h := newHarness(t, interceptor.WithLogger(l))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = h.call(ctx, &script{errs: fail(grpccodes.Unavailable, 1)}, getPolicy, nil)
	if len(h.attempts) != 1 || h.attempts[0].Reason != interceptor.ContextDone {
		t.Fatalf("attempts %+v; want one ContextDone", h.attempts)
	}
	if level != logging.LevelWarn || msg != "iamretry: giving up" {
		t.Fatalf("logged %v %q; want Warn \"iamretry: giving up\"", level, msg)
	}
}
