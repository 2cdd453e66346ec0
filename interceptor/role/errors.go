package role

import (
	"context"
	"errors"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// ErrPredefined is matched (errors.Is) by the error of an Update of a
// predefined role (a name "roles/..."): only custom roles can be changed.
// It is refused before any call; its gRPC code is INVALID_ARGUMENT.
var ErrPredefined = errors.New("predefined roles (roles/...) cannot be changed: only custom roles (projects/PROJECT_ID/roles/ID, organizations/ORG_ID/roles/ID) can")

// ErrDeleted is matched (errors.Is) by the error of an Update of a custom
// role that is deleted (Role.deleted): undelete it (UndeleteRole) first. It
// is refused after the read, before any write; its gRPC code is
// FAILED_PRECONDITION, as IAM's own refusal is.
var ErrDeleted = errors.New("the role is deleted: undelete it (UndeleteRole) before changing it")

// refusal is ErrPredefined or ErrDeleted with its gRPC code.
type refusal struct {
	err  error
	code grpccodes.Code
}

func (e *refusal) Error() string              { return e.err.Error() }
func (e *refusal) Is(target error) bool       { return target == e.err }
func (e *refusal) GRPCStatus() *status.Status { return status.New(e.code, e.Error()) }

// invalid makes an INVALID_ARGUMENT status error.
func invalid(format string, args ...any) error {
	return status.Errorf(grpccodes.InvalidArgument, "iamretry/role: "+format, args...)
}

// wrap names the role in err (the one shape of the Updaters' errors).
func wrap(name string, err error) error { return updaters.Wrap(nil, "iamretry/role", name, err) }

// wrapEnded is wrap for an error of a call made for ctx: when ctx has
// ended and err carries its code without wrapping its error, errors.Is
// finds the context's error too.
func wrapEnded(ctx context.Context, name string, err error) error {
	return updaters.Wrap(ctx, "iamretry/role", name, err)
}

// changeError is the failure of a caller's own Change.
type changeError struct {
	n   int // 1-based index among the caller's changes
	err error
}

func (e *changeError) Error() string { return fmt.Sprintf("change %d: %v", e.n, e.err) }
func (e *changeError) Unwrap() error { return e.err }
