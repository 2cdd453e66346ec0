// Package interceptor_test holds the end-to-end tests of the interceptor:
// real cloud.google.com/go IAM clients (admin.IamClient, iam/apiv1
// IamPolicyClient) and a raw grpc.ClientConn, with the Retrier's interceptor
// added as a dial option, talking to the fake IAM server over bufconn, on a
// virtual clock.
package interceptor_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: every
// fake, client and connection a test makes is closed in its t.Cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
