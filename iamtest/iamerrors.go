package iamtest

import (
	"fmt"

	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

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
func QuotaExceededError() error { return fakeiam.QuotaExceededError() }

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
	return fakeiam.PermissionDeniedError(permission, resource)
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
	s.fake.FailNextWith(string(m), n, err)
}
