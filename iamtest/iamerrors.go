package iamtest

import (
	"fmt"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// Errors shaped as IAM sends them, for FailNextWith and for the fake's own
// answers. Google's error model (https://cloud.google.com/apis/design/errors
// and google/rpc/error_details.proto) puts the machine-readable reason in a
// google.rpc.ErrorInfo detail; code that classifies errors by reason can be
// tested with these.

// Reasons of the google.rpc.ErrorInfo details IAM sends, and the fake with
// it: Google's error model (https://cloud.google.com/apis/design/errors)
// puts the machine-readable reason of an error there, so code that
// classifies errors by reason can be tested against the fake.
const (
	// ReasonPermissionDenied is the reason of a PERMISSION_DENIED error:
	// the caller lacks a permission, or the resource does not exist or cannot
	// be seen.
	ReasonPermissionDenied = "IAM_PERMISSION_DENIED"
	// ReasonRateLimitExceeded is the reason of a RESOURCE_EXHAUSTED error: a
	// per-minute quota ran out.
	ReasonRateLimitExceeded = "RATE_LIMIT_EXCEEDED"
)

// quotaMessage is IAM's message for an exhausted per-minute read quota.
const quotaMessage = "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' " +
	"of service 'iam.googleapis.com' for consumer 'project_number:0'."

// QuotaExceededError returns the RESOURCE_EXHAUSTED (429) error IAM answers
// when a per-minute quota runs out
// (https://cloud.google.com/docs/quotas/troubleshoot): the message "Quota
// exceeded for quota metric 'Read requests' and limit 'Read requests per
// minute' of service 'iam.googleapis.com' for consumer 'project_number:0'.",
// a google.rpc.ErrorInfo of reason ReasonRateLimitExceeded (domain
// googleapis.com; metadata service, quota_metric, quota_limit, consumer) and
// a google.rpc.QuotaFailure naming the consumer. It carries no
// google.rpc.RetryInfo: SetRetryInfo adds one when the fake answers it. Hand
// it to FailNextWith.
func QuotaExceededError() error {
	return withDetails(status.New(codes.ResourceExhausted, quotaMessage),
		injectedDetails(codes.ResourceExhausted, "", "")...).Err()
}

// PermissionDeniedError returns the PERMISSION_DENIED (403) error IAM
// answers when the caller lacks permission on resource, or resource does not
// exist or cannot be seen (https://cloud.google.com/iam/docs/troubleshooting-access):
// "Permission 'PERMISSION' denied on resource 'RESOURCE' (or it may not
// exist).", with a google.rpc.ErrorInfo of reason ReasonPermissionDenied
// (domain iam.googleapis.com; metadata permission and resource). Hand it to
// FailNextWith. It panics on an empty permission or resource.
func PermissionDeniedError(permission, resource string) error {
	if permission == "" || resource == "" {
		panic(fmt.Sprintf("iamtest: PermissionDeniedError(%q, %q): the permission and the resource are required", permission, resource))
	}
	return permissionDenied("iam.googleapis.com", permission, resource,
		"Permission '"+permission+"' denied on resource '"+resource+"' (or it may not exist).")
}

// permissionDenied builds a PERMISSION_DENIED error with an
// IAM_PERMISSION_DENIED ErrorInfo.
func permissionDenied(domain, permission, resource, msg string) error {
	return withDetails(status.New(codes.PermissionDenied, msg),
		&errdetails.ErrorInfo{Reason: ReasonPermissionDenied, Domain: domain, Metadata: map[string]string{
			"permission": permission, "resource": resource,
		}}).Err()
}

// badRequest builds an INVALID_ARGUMENT error with IAM's generic message and
// a google.rpc.BadRequest naming the field and what is wrong with it.
func badRequest(field, why string) error {
	return withDetails(status.New(codes.InvalidArgument, "Request contains an invalid argument."),
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: why}}}).Err()
}

// withDetails adds details to st; it cannot fail for these message types.
func withDetails(st *status.Status, details ...protoadapt.MessageV1) *status.Status {
	if d, err := st.WithDetails(details...); err == nil {
		return d
	}
	return st
}

// iamMessage is the message Google's front ends send with code, used for
// injected errors when SetIAMMessages is on.
func iamMessage(code codes.Code) string {
	switch code {
	case codes.Unavailable:
		return "The service is currently unavailable."
	case codes.Internal:
		return "Internal error encountered."
	case codes.DeadlineExceeded:
		return "Deadline expired before operation could complete."
	case codes.ResourceExhausted:
		return quotaMessage
	case codes.PermissionDenied:
		return "The caller does not have permission"
	case codes.NotFound:
		return "Requested entity was not found."
	case codes.Aborted:
		return concurrentChangeMessage
	case codes.InvalidArgument:
		return "Request contains an invalid argument."
	case codes.FailedPrecondition:
		return "Precondition check failed."
	case codes.Unauthenticated:
		return "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
	}
	return code.String()
}

// injectedDetails are the details IAM attaches to an error of code: an
// ErrorInfo for PERMISSION_DENIED (with the permission the method needs on
// resource, and the domain of the service that owns it, as
// PermissionDeniedError) and RESOURCE_EXHAUSTED, nothing else.
func injectedDetails(code codes.Code, method, resource string) []protoadapt.MessageV1 {
	switch code {
	case codes.PermissionDenied:
		perm, domain := permissionFor(method, resource)
		return []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: ReasonPermissionDenied, Domain: domain,
			Metadata: map[string]string{"method": method, "permission": perm, "resource": resource}}}
	case codes.ResourceExhausted:
		return []protoadapt.MessageV1{
			&errdetails.ErrorInfo{Reason: ReasonRateLimitExceeded, Domain: "googleapis.com", Metadata: map[string]string{
				"service": "iam.googleapis.com", "quota_metric": "iam.googleapis.com/read_requests",
				"quota_limit": "ReadRequestsPerMinutePerProject", "consumer": "projects/0",
			}},
			&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
				Subject: "project_number:0", Description: quotaMessage,
			}}},
		}
	}
	return nil
}

// FailNextWith makes the next n calls of m (or of every method, for
// AnyMethod) fail with err before the fake acts, like FailNext, with whose
// scripts it queues. err is answered as it is, code, message and details
// (plus a google.rpc.RetryInfo when SetRetryInfo is set), so the ready-made
// IAM-shaped errors QuotaExceededError and PermissionDeniedError, or any
// status error of the test's own, can be injected. n == 0 does nothing. It
// panics on an unknown method, a negative n, or an err that is nil or is
// not a gRPC status error (made by status.Error, or status.New(...).Err()
// with details) of a known code.
func (s *Server) FailNextWith(m Method, n int, err error) {
	mustMethod("FailNextWith", m)
	mustCount("FailNextWith", n)
	if err == nil {
		panic("iamtest: FailNextWith: err is nil")
	}
	st, ok := status.FromError(err)
	if !ok {
		panic(fmt.Sprintf("iamtest: FailNextWith: %q is not a gRPC status error (make it with status.Error)", err))
	}
	mustFailCode("FailNextWith", st.Code())
	s.faults.addScript(m, n, script{code: st.Code(), err: err})
}
