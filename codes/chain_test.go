package codes

import (
	"context"
	"fmt"
	"testing"

	"github.com/googleapis/gax-go/v2/apierror"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// abortedAround reports ABORTED around what it wraps, as the policy
// Updater's conflict error does around a FAILED_PRECONDITION answer.
type abortedAround struct{ err error }

func (e abortedAround) Error() string              { return "conflict: " + e.err.Error() }
func (e abortedAround) Unwrap() error              { return e.err }
func (e abortedAround) GRPCStatus() *status.Status { return status.New(grpccodes.Aborted, e.Error()) }

// TestCodeOfRESTErrorsByBodyStatusThenHTTP pins CodeOf: the JSON body's
// status first (gax's APIError guesses ABORTED for every 409 and
// INVALID_ARGUMENT for every 400), the HTTP status only when the body has
// none, a gRPC status as it is, the first code of a wrapped chain.
func TestCodeOfRESTErrorsByBodyStatusThenHTTP(t *testing.T) {
	already := restError(t, 409, jsonError(409, "ALREADY_EXISTS", ""))
	precond := restError(t, 400, jsonError(400, "FAILED_PRECONDITION", ""))
	apiAlready, ok := apierror.FromError(already)
	if !ok {
		t.Fatal("apierror.FromError refused a googleapi.Error")
	}
	for _, tc := range []struct {
		name string
		err  error
		want grpccodes.Code
	}{
		{"nil", nil, grpccodes.OK},
		{"gRPC status", status.Error(grpccodes.Unavailable, "x"), grpccodes.Unavailable},
		{"wrapped gRPC status", fmt.Errorf("ctx: %w", status.Error(grpccodes.NotFound, "x")), grpccodes.NotFound},
		{"409 ALREADY_EXISTS", already, grpccodes.AlreadyExists},
		{"400 FAILED_PRECONDITION", precond, grpccodes.FailedPrecondition},
		{"APIError around 409 ALREADY_EXISTS", apiAlready, grpccodes.AlreadyExists},
		{"wrapped APIError", fmt.Errorf("op: %w", apiAlready), grpccodes.AlreadyExists},
		{"409 without a body status", restError(t, 409, "conflict"), grpccodes.Aborted},
		{"412 without a body status", restError(t, 412, ""), grpccodes.FailedPrecondition},
		{"502 without a body status", restError(t, 502, "<html>bad gateway</html>"), grpccodes.Unavailable},
		{"a status wrapper around a REST error speaks first", abortedAround{precond}, grpccodes.Aborted},
		{"the caller's context", fmt.Errorf("x: %w", context.Canceled), grpccodes.Canceled},
		{"no code at all", fmt.Errorf("plain"), grpccodes.Unknown},
	} {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("%s: CodeOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOfErrorFirstSpeakerOfTheChain: OfError classifies the first error of
// the chain that carries a code, gRPC or REST: a wrapper that reports
// ABORTED around a REST FAILED_PRECONDITION is a Conflict, not Permanent.
func TestOfErrorFirstSpeakerOfTheChain(t *testing.T) {
	precond := restError(t, 400, jsonError(400, "FAILED_PRECONDITION", ""))
	if got := OfError(abortedAround{precond}); got != Conflict {
		t.Fatalf("OfError(ABORTED around a REST FAILED_PRECONDITION) = %v, want Conflict", got)
	}
	if got := OfError(fmt.Errorf("w: %w", abortedAround{status.Error(grpccodes.FailedPrecondition, "x")})); got != Conflict {
		t.Fatalf("OfError(ABORTED around a gRPC FAILED_PRECONDITION) = %v, want Conflict", got)
	}
	if got := OfError(precond); got != Permanent {
		t.Fatalf("OfError(REST FAILED_PRECONDITION) = %v, want Permanent", got)
	}
}

func TestCodeOfNoAllocForStatusErrors(t *testing.T) {
	err := status.Error(grpccodes.Unavailable, "x")
	if n := testing.AllocsPerRun(100, func() { _ = CodeOf(err) }); n != 0 {
		t.Fatalf("CodeOf(status error): %v allocs, want 0", n)
	}
}
