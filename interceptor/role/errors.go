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

// updateError is what Update returns for a failure: it names the role and
// wraps the cause, so errors.Is and errors.As see the cause and status.Code
// (which looks through wrapping) sees its gRPC code.
type updateError struct {
	name string
	err  error
	// ctx is the context's error when the context ended and the cause
	// reports it by its code alone (gRPC's status errors do not wrap the
	// context's error; a REST client's do): errors.Is finds it either way.
	ctx error
}

func wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	return &updateError{name: name, err: err}
}

// wrapEnded is wrap for an error of a call made under ctx: when ctx has
// ended and err carries its code without wrapping its error, errors.Is
// finds the context's error too.
func wrapEnded(ctx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	return &updateError{name: name, err: err, ctx: updaters.EndedBy(ctx, err)}
}

// Is reports whether target is the error of the context that ended the
// call (see wrapEnded).
func (e *updateError) Is(target error) bool { return e.ctx != nil && target == e.ctx }

func (e *updateError) Error() string {
	return fmt.Sprintf("iamretry/role: update of %s: %v", e.name, e.err)
}

func (e *updateError) Unwrap() error { return e.err }

// GRPCStatus gives the error its cause's status with the whole message, so
// that status.Code(err) is the cause's code also when the cause is a REST
// error (a discovery client's *googleapi.Error, whose code the JSON body
// names: codes.CodeOf).
func (e *updateError) GRPCStatus() *status.Status {
	return updaters.Status(e.err, e.Error())
}

// changeError is the failure of a caller's own Change.
type changeError struct {
	n   int // 1-based index among the caller's changes
	err error
}

func (e *changeError) Error() string { return fmt.Sprintf("change %d: %v", e.n, e.err) }
func (e *changeError) Unwrap() error { return e.err }

// endedError is the error of an Update whose context had ended before it
// started: its gRPC code is the context's (CANCELED or DEADLINE_EXCEEDED)
// and it wraps the context's error and cause.
type endedError struct{ err, cause error }

func (e *endedError) Error() string {
	return fmt.Sprintf("%v before the update started; nothing was sent", e.cause)
}

func (e *endedError) Unwrap() []error {
	if e.cause == e.err {
		return []error{e.err}
	}
	return []error{e.err, e.cause}
}

func (e *endedError) GRPCStatus() *status.Status {
	return status.New(status.FromContextError(e.err).Code(), e.Error())
}
