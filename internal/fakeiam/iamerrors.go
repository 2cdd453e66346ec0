package fakeiam

import (
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

// Reasons of the google.rpc.ErrorInfo details the fake sends.
const (
	ReasonPermissionDenied  = "IAM_PERMISSION_DENIED"
	ReasonRateLimitExceeded = "RATE_LIMIT_EXCEEDED"
)

// quotaMessage is IAM's message for an exhausted per-minute read quota.
const quotaMessage = "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' " +
	"of service 'iam.googleapis.com' for consumer 'project_number:0'."

// QuotaExceededError returns the RESOURCE_EXHAUSTED error IAM answers when a
// per-minute quota runs out: the message "Quota exceeded for quota metric
// 'Read requests' and limit 'Read requests per minute' of service
// 'iam.googleapis.com' for consumer 'project_number:0'.", a
// google.rpc.ErrorInfo of reason RATE_LIMIT_EXCEEDED (domain googleapis.com,
// metadata service, quota_metric, quota_limit, consumer) and a
// google.rpc.QuotaFailure naming the consumer. It carries no RetryInfo (add
// one with SetRetryInfo). Source: https://cloud.google.com/docs/quotas/troubleshoot.
func QuotaExceededError() error {
	return withDetails(status.New(codes.ResourceExhausted, quotaMessage),
		injectedDetails(codes.ResourceExhausted, "", "")...).Err()
}

// PermissionDeniedError returns the PERMISSION_DENIED error IAM answers when
// the caller lacks permission on resource, or resource does not exist or
// cannot be seen: "Permission 'PERMISSION' denied on resource 'RESOURCE' (or
// it may not exist).", with a google.rpc.ErrorInfo of reason
// IAM_PERMISSION_DENIED (domain iam.googleapis.com, metadata permission and
// resource). Source: https://cloud.google.com/iam/docs/troubleshooting-access.
func PermissionDeniedError(permission, resource string) error {
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
