package interceptor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Span events: a failed attempt that is retried adds iamretry.retry, a call
// that gives up adds iamretry.gave_up, to the recording span of the call's
// context (OpenTelemetry). Nothing is done when no span records, and
// nothing on the success path.
const (
	retryEvent  = "iamretry.retry"
	gaveUpEvent = "iamretry.gave_up"
)

// spanEvent adds a's event, if it has one, to the recording spans of the
// call: the span of ctx, or of each caller still waiting on a batch.
func spanEvent(ctx context.Context, a *Attempt) {
	name := retryEvent
	switch {
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
	attrs := []attribute.KeyValue{
		attribute.Int("iamretry.attempt", a.N),
		attribute.String("iamretry.code", statusName(a.Err)),
		attribute.String("iamretry.reason", a.Reason.token()),
	}
	if a.Retrying {
		attrs = append(attrs, attribute.Float64("iamretry.wait", a.Wait.Seconds()))
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}
