package policy

import (
	"context"
	"errors"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// MaxPrincipals is the most member entries an IAM policy may hold, counted
// across bindings: a principal granted two roles counts twice, as IAM counts.
const MaxPrincipals = 1500

// ErrTooManyPrincipals is matched (errors.Is) by the error of an Update whose
// change would take the policy past MaxPrincipals member entries. Such a
// change is refused before anything is written; its error's gRPC code is
// INVALID_ARGUMENT, as IAM's own refusal is.
var ErrTooManyPrincipals = errors.New("the policy would hold more than 1500 principals (member entries across bindings)")

// invalid makes an INVALID_ARGUMENT status error.
func invalid(format string, args ...any) error {
	return status.Errorf(grpccodes.InvalidArgument, "iamretry/policy: "+format, args...)
}

// wrap names the resource in err (the one shape of the Updaters' errors).
func wrap(resource string, err error) error {
	return updaters.Wrap(nil, "iamretry/policy", resource, err)
}

// mutationError is the failure of a caller's own Mutation.
type mutationError struct {
	n   int // 1-based index among the caller's mutations
	err error
}

func (e *mutationError) Error() string { return fmt.Sprintf("mutation %d: %v", e.n, e.err) }
func (e *mutationError) Unwrap() error { return e.err }

// limitError refuses a change that would take a policy past MaxPrincipals.
type limitError struct{ count int }

func (e *limitError) Error() string {
	return fmt.Sprintf("the change would take the policy to %d principals (member entries across bindings), more than IAM's limit of %d; nothing was written",
		e.count, MaxPrincipals)
}

func (e *limitError) Is(target error) bool { return target == ErrTooManyPrincipals }

func (e *limitError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.Error())
}

// left is the error of a caller whose context ended before its result was
// known.
func left(ctx context.Context, queued bool) error { return updaters.Left(ctx, queued) }
