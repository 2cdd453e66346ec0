package codes

import (
	"context"
	"fmt"
	"testing"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
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

// TestCodeOfHTTPStatusWithoutBody: a REST error whose body names no status
// gets the code google/rpc/code.proto maps its HTTP status from, for every
// status, whether the *googleapi.Error is reachable or only gax's APIError
// (its HTTP code) is: gax's mapping where the two agree, CANCELLED for 499
// and UNAVAILABLE for 502 where gax's ranges say otherwise.
func TestCodeOfHTTPStatusWithoutBody(t *testing.T) {
	t.Parallel()
	want := func(h int) grpccodes.Code {
		switch h {
		case 400:
			return grpccodes.InvalidArgument
		case 401:
			return grpccodes.Unauthenticated
		case 403:
			return grpccodes.PermissionDenied
		case 404:
			return grpccodes.NotFound
		case 409:
			return grpccodes.Aborted
		case 412:
			return grpccodes.FailedPrecondition
		case 416:
			return grpccodes.OutOfRange
		case 429:
			return grpccodes.ResourceExhausted
		case 499:
			return grpccodes.Canceled
		case 501:
			return grpccodes.Unimplemented
		case 502, 503:
			return grpccodes.Unavailable
		case 504:
			return grpccodes.DeadlineExceeded
		}
		switch {
		case h >= 200 && h < 300:
			return grpccodes.OK
		case h >= 400 && h < 500:
			return grpccodes.FailedPrecondition
		case h >= 500 && h < 600:
			return grpccodes.Internal
		}
		return grpccodes.Unknown
	}
	for h := -1; h < 1000; h++ {
		ge := &googleapi.Error{Code: h, Message: "m"}
		if got := CodeOf(ge); got != want(h) {
			t.Errorf("CodeOf(googleapi.Error %d) = %v, want %v", h, got, want(h))
		}
		if h <= 0 {
			continue
		}
		ae, ok := apierror.ParseError(ge, false) // the googleapi.Error out of reach
		if !ok {
			t.Fatalf("apierror.ParseError(%d) failed", h)
		}
		if got := CodeOf(ae); got != want(h) {
			t.Errorf("CodeOf(APIError of HTTP %d) = %v, want %v", h, got, want(h))
		}
	}
}
