package interceptor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// logFields records the fields of each log line as strings, by key.
type logFields struct{ lines []map[string]string }

func (l *logFields) logger() logging.Logger {
	return logging.LoggerFunc(func(_ context.Context, _ logging.Level, _ string, fields ...any) {
		m := map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			m[fmt.Sprint(fields[i])] = fmt.Sprint(fields[i+1])
		}
		l.lines = append(l.lines, m)
	})
}

// TestOneVocabularyOnEveryOutlet: a give-up reads the same on the log, the
// span event and the gave_up instrument: grpc.method without its leading
// slash, grpc.status in UPPER_SNAKE, iamretry.reason as the metrics' token.
func TestOneVocabularyOnEveryOutlet(t *testing.T) {
	t.Parallel()
	var logs logFields
	h := newHarnessOf(t, []interceptor.Option{interceptor.WithLogger(logs.logger()), interceptor.WithMaxAttempts(2)}, withMeter(), withSpans())
	events := h.traced(func(ctx context.Context) {
		_ = h.call(ctx, &script{errs: fail(grpccodes.Unavailable, 2)}, getPolicy, nil)
	})
	want := map[string]string{"grpc.method": getPolicyAttr, "grpc.status": "UNAVAILABLE", "iamretry.reason": "max_attempts"}

	if len(logs.lines) != 2 {
		t.Fatalf("logged %v; want a retry and a give-up", logs.lines)
	}
	gaveUp := logs.lines[1]
	for k, v := range want {
		if gaveUp[k] != v {
			t.Errorf("log: %s=%q, want %q", k, gaveUp[k], v)
		}
	}
	if w := logs.lines[0]["iamretry.wait"]; w != "1.5" {
		t.Errorf("log: iamretry.wait=%q, want 1.5 (seconds, as on the span event)", w)
	}

	if len(events) != 2 || events[1].Name != "iamretry.gave_up" {
		t.Fatalf("span events %+v; want iamretry.retry, iamretry.gave_up", events)
	}
	ev := map[string]string{}
	for _, kv := range events[1].Attributes {
		ev[string(kv.Key)] = kv.Value.Emit()
	}
	for k, v := range want {
		if k == "grpc.method" {
			continue // the span is the call's: it names the method itself
		}
		if ev[k] != v {
			t.Errorf("span event: %s=%q, want %q", k, ev[k], v)
		}
	}
	for _, kv := range events[0].Attributes {
		if kv.Key == "iamretry.wait" && kv.Value.Emit() != "1.5" {
			t.Errorf("span event: iamretry.wait=%q, want 1.5", kv.Value.Emit())
		}
	}

	if n, ok := sum(t, h.collect(), "iamretry.client.call.gave_up", want); !ok || n != 1 {
		t.Fatalf("gave_up with %v: %d (found %v), want 1", want, n, ok)
	}
}

// TestLogNamesACallOutsideTheTables: grpc.method is "other" for a name
// given to Do, as on the metrics, and iamretry.name keeps the name.
func TestLogNamesACallOutsideTheTables(t *testing.T) {
	t.Parallel()
	var logs logFields
	h := newHarness(t, interceptor.WithLogger(logs.logger()), interceptor.WithMaxAttempts(1))
	_ = h.r.Do(context.Background(), "create bucket", func(context.Context) error {
		return status.Error(grpccodes.Unavailable, "down")
	})
	if len(logs.lines) != 1 {
		t.Fatalf("logged %v; want one give-up", logs.lines)
	}
	if got := logs.lines[0]; got["grpc.method"] != "other" || got["iamretry.name"] != "create bucket" {
		t.Fatalf("logged %v; want grpc.method=other, iamretry.name=\"create bucket\"", got)
	}
}
