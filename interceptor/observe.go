package interceptor

import (
	"context"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
)

// observe hands a to every observer, in order, then to the logger, then
// adds its span event (events.go).
func (r *Retrier) observe(ctx context.Context, a *Attempt) {
	for _, f := range r.cfg.observers {
		f(ctx, *a)
	}
	if r.cfg.logger != nil {
		logAttempt(ctx, r.cfg.logger, a, r.methodValue(a.Method))
	}
	spanEvent(ctx, a)
}

// WithLogger logs through l (go-grpc-middleware's logging.Logger): Info for a
// retry, an unsafe failure and a retried call that succeeded, Warn for a
// give-up, Debug for a failure not retryable by nature and a WaitVisible good
// read. Fields, as the metrics name them: grpc.method, grpc.status,
// iamretry.class, iamretry.attempt, iamretry.reason, iamretry.wait and
// iamretry.elapsed (s), error; iamretry.name when grpc.method is "other".
// Not nil.
func WithLogger(l logging.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithLogger(nil): give a logging.Logger, or leave the option out")
			return
		}
		c.logger = l
	}
}

func logAttempt(ctx context.Context, l logging.Logger, a *Attempt, method string) {
	level, msg := logging.LevelDebug, "iamretry: not retried"
	switch {
	case a.Reason == Retry:
		level, msg = logging.LevelInfo, "iamretry: retrying"
	case a.Reason == Confirming:
		msg = "iamretry: good read, confirming"
	case a.Reason == Succeeded:
		level, msg = logging.LevelInfo, "iamretry: succeeded after retries"
	case a.Reason == Unsafe:
		level = logging.LevelInfo // a give-up by the method's nature: "not retried"
	case givesUp(a): // as the gave_up instrument and span event count it
		level, msg = logging.LevelWarn, "iamretry: giving up"
	}
	fields := make([]any, 0, 20)
	fields = append(fields, keyMethod, method)
	if method == otherMethod {
		fields = append(fields, keyName, a.Method)
	}
	if a.Err != nil {
		fields = append(fields, keyStatus, statusName(a.Err), keyClass, a.Class.String())
	}
	fields = append(fields,
		keyAttempt, a.N,
		keyReason, a.Reason.token(),
		keyWait, a.Wait.Seconds(),
		keyElapsed, a.Elapsed.Seconds(),
	)
	if a.Err != nil {
		fields = append(fields, "error", a.Err)
	}
	l.Log(ctx, level, msg, fields...)
}

func isInterrupted(err error) bool {
	_, ok := err.(*interruptedError)
	return ok
}
