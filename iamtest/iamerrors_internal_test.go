package iamtest

import (
	"testing"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// TestReasonsAreTheFakes checks that the reasons iamtest documents are those
// the fake sends.
func TestReasonsAreTheFakes(t *testing.T) {
	t.Parallel()
	if ReasonPermissionDenied != fakeiam.ReasonPermissionDenied || ReasonRateLimitExceeded != fakeiam.ReasonRateLimitExceeded {
		t.Fatalf("iamtest reasons %q, %q; the fake sends %q, %q", ReasonPermissionDenied, ReasonRateLimitExceeded,
			fakeiam.ReasonPermissionDenied, fakeiam.ReasonRateLimitExceeded)
	}
}
