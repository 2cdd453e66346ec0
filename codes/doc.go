// Package codes sorts failures into the retry classes of Google's IAM
// guidance ("Retry failed requests"):
//
//	gRPC code           HTTP     Class        what iamretry does
//	UNAVAILABLE         502/503  Transient    retried with backoff
//	INTERNAL            500      Transient    retried with backoff
//	DEADLINE_EXCEEDED   504      Transient    retried while the caller's context lives
//	UNKNOWN             500      Transient    retried with backoff (grpc-go's code for
//	                                          a proxy's bare HTTP 500)
//	NOT_FOUND           404      Propagation  retried only when the caller opts in
//	ABORTED             409      Conflict     the whole read-modify-write is rerun
//	RESOURCE_EXHAUSTED  429      Transient    quota: a definite rejection, retried
//	                                          whatever the method, after the server's
//	                                          RetryInfo or Retry-After delay at least,
//	                                          else no sooner than 30 s
//	anything else                Permanent    returned at once
//
// Failures the client produced before the server could act are Permanent
// whatever their code: a RESOURCE_EXHAUSTED of gRPC's own message size
// limits, an UNAVAILABLE caused by TLS certificate verification
// (unknown authority, expired, host name mismatch, a certificate the server
// refused) and an INTERNAL "grpc: error while marshaling" (a request that
// cannot be encoded, such as invalid UTF-8 in a string field).
//
// [OfError] classifies gRPC status errors and the errors of REST calls
// (*googleapi.Error, and gax's *apierror.APIError): by the JSON error body's
// "status" when it has one, else by the HTTP status as in the table. CodeOf
// gives the gRPC code of any error the same way.
//
// The package holds no state and reads no clock; [Of] and [OfError] on a
// gRPC status error as gRPC returns it allocate nothing.
package codes
