package interceptor

import "context"

// ownerKey marks a context whose calls are retried by an owner above the
// interceptor: Retrier.Do, or a policy Updater. One owner per call: an
// interceptor or a RoundTripper beneath passes the failures of a marked
// call straight through, so the server sees the attempts of one schedule
// and the caller never waits past one deadline.
type ownerKey struct{}

// own returns ctx marked as owned.
func own(ctx context.Context) context.Context {
	if owned(ctx) {
		return ctx
	}
	return context.WithValue(ctx, ownerKey{}, true)
}

// owned reports whether ctx is marked. It is read only after an attempt
// failed: the success path never walks the context.
func owned(ctx context.Context) bool {
	v, _ := ctx.Value(ownerKey{}).(bool)
	return v
}
