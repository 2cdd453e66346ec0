package interceptor

// The one vocabulary of the outlets: logs (WithLogger), span events
// (events.go) and metrics (metrics.go) name each fact with one key and give
// it one value. grpc.method is the metrics' value (gRFC A66: no leading
// slash, bounded, "other" for a name outside the tables: methodValue);
// grpc.status a gRPC code's name in UPPER_SNAKE, "UNAVAILABLE" (statusName);
// iamretry.reason a Reason's token, "max_attempts" (Reason.token);
// durations are seconds.
const (
	keyMethod  = "grpc.method"
	keyStatus  = "grpc.status"
	keyReason  = "iamretry.reason"
	keyAttempt = "iamretry.attempt"
	keyClass   = "iamretry.class"
	keyWait    = "iamretry.wait"
	keyElapsed = "iamretry.elapsed"
	// keyName is the name a call went by (a Do's name, a REST "VERB
	// /path"), logged beside grpc.method when that is "other".
	keyName = "iamretry.name"
)

// methodValue is grpc.method's value for method: the one the Retrier's
// instruments record it under (bounded by MaxMixinMethods), or, without
// instruments, methodAttr's.
func (r *Retrier) methodValue(method string) string {
	if r.m != nil {
		return r.m.statsFor(method).name
	}
	return methodAttr(method)
}
