package codes_test

import (
	"fmt"

	"github.com/iamretry/iamretry/codes"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func ExampleOfError() {
	err := fmt.Errorf("setting policy: %w", status.Error(grpccodes.Aborted, "There were concurrent policy changes."))
	fmt.Println(codes.OfError(err))
	for _, c := range []grpccodes.Code{grpccodes.Unavailable, grpccodes.NotFound, grpccodes.PermissionDenied} {
		fmt.Println(c, codes.HTTPStatus(c), codes.Of(c))
	}
	// Output:
	// Conflict
	// Unavailable 503 Transient
	// NotFound 404 Propagation
	// PermissionDenied 403 Permanent
}
