package interceptor

import (
	"fmt"
	"testing"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/googleerr"
)

// The RetryInfo lookup runs on every failed attempt: a status error without
// details, as gRPC returns it, must cost nothing.
func TestRetryInfoLookupAllocatesNothing(t *testing.T) {
	err := status.Error(grpccodes.Unavailable, "down")
	if n := testing.AllocsPerRun(100, func() { _, _ = googleerr.RetryDelay(err) }); n != 0 {
		t.Fatalf("googleerr.RetryDelay allocates %v times", n)
	}
	wrapped := fmt.Errorf("call: %w", err)
	if st := googleerr.StatusOf(wrapped); st == nil || st.Code() != grpccodes.Unavailable {
		t.Fatalf("googleerr.StatusOf(wrapped) = %v", st)
	}
	if googleerr.StatusOf(fmt.Errorf("plain")) != nil {
		t.Fatal("googleerr.StatusOf(plain error) should be nil")
	}
}
