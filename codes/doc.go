// Package codes sorts gRPC status codes into the retry classes of Google's IAM
// guidance ("Retry failed requests"):
//
//	gRPC code          HTTP     Class        what iamretry does
//	UNAVAILABLE        503      Transient    retried with backoff
//	INTERNAL           500      Transient    retried with backoff
//	DEADLINE_EXCEEDED  504      Transient    retried while the caller's context lives
//	NOT_FOUND          404      Propagation  retried only when the caller opts in
//	ABORTED            409      Conflict     the whole read-modify-write is rerun
//	anything else               Permanent    returned at once
//
// The package is pure: it holds no state, reads no clock and allocates nothing.
package codes
