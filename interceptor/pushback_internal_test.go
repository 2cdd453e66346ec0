package interceptor

import (
	"fmt"
	"testing"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The RetryInfo lookup runs on every failed attempt: a status error without
// details, as gRPC returns it, must cost nothing.
func TestRetryInfoLookupAllocatesNothing(t *testing.T) {
	err := status.Error(grpccodes.Unavailable, "down")
	if n := testing.AllocsPerRun(100, func() { _, _ = retryInfoDelay(err) }); n != 0 {
		t.Fatalf("retryInfoDelay allocates %v times", n)
	}
	wrapped := fmt.Errorf("call: %w", err)
	if st := statusOf(wrapped); st == nil || st.Code() != grpccodes.Unavailable {
		t.Fatalf("statusOf(wrapped) = %v", st)
	}
	if statusOf(fmt.Errorf("plain")) != nil {
		t.Fatal("statusOf(plain error) should be nil")
	}
}
