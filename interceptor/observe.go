package interceptor

import (
	"context"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"

	"github.com/iamretry/iamretry/codes"
)

// observe hands a to every observer, in order, then to the logger, then
// adds its span event (events.go).
func (r *Retrier) observe(ctx context.Context, a *Attempt) {
	for _, f := range r.cfg.observers {
		f(ctx, *a)
	}
	if r.cfg.logger != nil {
		logAttempt(ctx, r.cfg.logger, a)
	}
	spanEvent(ctx, a)
}

// WithLogger logs each retry and each give-up through l, go-grpc-middleware's
// logging.Logger (adapters exist for log/slog, zap, zerolog, logrus, ...):
// Info for a scheduled retry, a transient failure not retried as unsafe, and
// a retried call that succeeded; Warn for a retryable failure given up
// (deadline, attempt cap, budget, pushback, the caller's context ended
// during a wait or a transient failure); Debug for a failure not retried
// by its nature (Permanent, Conflict, 404 without the opt-in, Disable(),
// the caller's context ended on such a failure). Fields:
// grpc.method, grpc.code, iamretry.attempt, iamretry.class, iamretry.reason,
// iamretry.wait, iamretry.elapsed, error. l must not be nil.
func WithLogger(l logging.Logger) Option {
	return func(c *config) {
		if l == nil {
			c.fail("WithLogger(nil): give a logging.Logger, or leave the option out")
			return
		}
		c.logger = l
	}
}

func logAttempt(ctx context.Context, l logging.Logger, a *Attempt) {
	level, msg := logging.LevelDebug, "iamretry: not retried"
	switch {
	case a.Reason == Retry:
		level, msg = logging.LevelInfo, "iamretry: retrying"
	case a.Reason == Succeeded:
		level, msg = logging.LevelInfo, "iamretry: succeeded after retries"
	case a.Reason == Unsafe:
		level = logging.LevelInfo // a give-up by the method's nature: "not retried"
	case givesUp(a): // as the gave_up instrument and span event count it
		level, msg = logging.LevelWarn, "iamretry: giving up"
	}
	l.Log(ctx, level, msg,
		"grpc.method", a.Method,
		"grpc.code", codes.CodeOf(a.Err).String(),
		"iamretry.attempt", a.N,
		"iamretry.class", a.Class.String(),
		"iamretry.reason", a.Reason.String(),
		"iamretry.wait", a.Wait,
		"iamretry.elapsed", a.Elapsed,
		"error", a.Err,
	)
}

func isInterrupted(err error) bool {
	_, ok := err.(*interruptedError)
	return ok
}
