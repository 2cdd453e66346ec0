package interceptor

import "context"

// restFlags are the per-request options of the RoundTripper, carried by the
// request's context (an HTTP request has no call options).
type restFlags uint8

const (
	restDisable restFlags = 1 << iota
	restNotFound
)

type restFlagsKey struct{}

func withRESTFlag(ctx context.Context, f restFlags) context.Context {
	return context.WithValue(ctx, restFlagsKey{}, restFlagsOf(ctx)|f)
}

// restFlagsOf reads the flags; the RoundTripper reads them only after a
// failure.
func restFlagsOf(ctx context.Context) restFlags {
	f, _ := ctx.Value(restFlagsKey{}).(restFlags)
	return f
}

// DisableContext returns a context under which the RoundTripper retries
// nothing: a request made with it (req.WithContext, a discovery call's
// .Context(ctx), a GAPIC REST call's ctx) gets its first failure as it is.
// It is the RoundTripper's Disable().
func DisableContext(ctx context.Context) context.Context {
	return withRESTFlag(ctx, restDisable)
}

// RetryNotFoundContext returns a context under which the RoundTripper
// retries 404 NOT_FOUND as it retries Propagation failures: use it for a
// read that follows the creation of what it reads. It is the RoundTripper's
// RetryNotFound(), with the same caveat: not for a delete.
func RetryNotFoundContext(ctx context.Context) context.Context {
	return withRESTFlag(ctx, restNotFound)
}
