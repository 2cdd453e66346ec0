package codes_test

import (
	"context"
	"fmt"

	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
)

// CodeOf reads one gRPC code from an error of either transport: a REST 409
// is ABORTED or ALREADY_EXISTS as its JSON body says, so a caller switches
// on one code whichever client it uses.
func ExampleCodeOf() {
	for _, err := range []error{
		status.Error(grpccodes.Aborted, "There were concurrent policy changes."),
		&googleapi.Error{Code: 409, Body: `{"error":{"code":409,"status":"ABORTED"}}`},
		&googleapi.Error{Code: 409, Body: `{"error":{"code":409,"status":"ALREADY_EXISTS"}}`},
		fmt.Errorf("creating robot: %w", &googleapi.Error{Code: 503}),
		context.DeadlineExceeded,
		nil,
	} {
		fmt.Println(codes.CodeOf(err))
	}
	// Output:
	// Aborted
	// Aborted
	// AlreadyExists
	// Unavailable
	// DeadlineExceeded
	// OK
}

// HTTPStatus is the HTTP status Google's REST face answers for a gRPC code.
func ExampleHTTPStatus() {
	for _, c := range []grpccodes.Code{grpccodes.Aborted, grpccodes.FailedPrecondition, grpccodes.ResourceExhausted} {
		fmt.Println(c, codes.HTTPStatus(c))
	}
	// Output:
	// Aborted 409
	// FailedPrecondition 400
	// ResourceExhausted 429
}

// Of is the retry class of a code alone: what the interceptor does with it
// when nothing else (a RetryInfo, the method's safety) says more.
func ExampleOf() {
	for _, c := range []grpccodes.Code{grpccodes.Unavailable, grpccodes.Aborted, grpccodes.NotFound, grpccodes.InvalidArgument, grpccodes.DataLoss} {
		fmt.Println(c, codes.Of(c))
	}
	// Output:
	// Unavailable Transient
	// Aborted Conflict
	// NotFound Propagation
	// InvalidArgument Permanent
	// DataLoss Permanent
}
