package interceptor

import "google.golang.org/grpc"

// disableOption and notFoundOption are the per-call options. They embed
// grpc.EmptyCallOption, so gRPC ignores them: they are harmless on a
// connection without the interceptor and need not be filtered out. Each is a
// single shared value, so passing one allocates nothing.
type disableOption struct{ grpc.EmptyCallOption }

type notFoundOption struct{ grpc.EmptyCallOption }

var (
	disableOpt  = &disableOption{}
	notFoundOpt = &notFoundOption{}
)

// Disable returns a call option that turns retries off for one call: its
// first failure is returned as it is. On a cloud.google.com/go client pass it
// through gax: client.GetIamPolicy(ctx, req, gax.WithGRPCOptions(interceptor.Disable())).
func Disable() grpc.CallOption { return disableOpt }

// RetryNotFound returns a call option that makes one call retry NOT_FOUND
// (HTTP 404) as a transient failure: use it for a read that follows the
// creation of the resource it reads, since IAM reads are eventually
// consistent. The method must still be safe to retry. Do not pass it to a
// delete: a delete replayed after a lost answer meets NOT_FOUND because it
// succeeded, and would retry its own success until the deadline.
func RetryNotFound() grpc.CallOption { return notFoundOpt }
