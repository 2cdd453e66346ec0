package interceptor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span events: a failed attempt that is retried adds iamretry.retry, a call
// that gives up adds iamretry.gave_up, a WaitVisible good read short of its
// count adds iamretry.confirm, to the recording span of the call's context
// (OpenTelemetry). Attributes (vocab.go): iamretry.attempt, grpc.status
// (on an error), iamretry.reason, iamretry.wait (seconds, when another
// attempt follows). Nothing is done when no span records, and nothing on
// the success path.
const (
	retryEvent   = "iamretry.retry"
	gaveUpEvent  = "iamretry.gave_up"
	confirmEvent = "iamretry.confirm"
)

// spanEvent adds a's event, if it has one, to the recording spans of the
// call: the span of ctx, or of each caller still waiting on a batch.
func spanEvent(ctx context.Context, a *Attempt) {
	name := retryEvent
	switch {
	case a.Reason == Confirming:
		name = confirmEvent
	case a.Retrying:
	case givesUp(a):
		name = gaveUpEvent
	default:
		return
	}
	if callers, ok := callersOf(ctx); ok {
		for _, c := range callers() {
			addEvent(trace.SpanFromContext(c), name, a)
		}
		return
	}
	addEvent(trace.SpanFromContext(ctx), name, a)
}

func addEvent(span trace.Span, name string, a *Attempt) {
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, attribute.Int(keyAttempt, a.N))
	if a.Err != nil {
		attrs = append(attrs, attribute.String(keyStatus, statusName(a.Err)))
	}
	attrs = append(attrs, attribute.String(keyReason, a.Reason.token()))
	if a.Retrying {
		attrs = append(attrs, attribute.Float64(keyWait, a.Wait.Seconds()))
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}
