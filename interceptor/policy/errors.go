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

// updateError is what Update returns for a failure: it names the resource
// and wraps the cause, so errors.Is and errors.As see the cause and
// status.Code (which looks through wrapping) sees its gRPC code.
type updateError struct {
	resource string
	err      error
}

func wrap(resource string, err error) error {
	if err == nil {
		return nil
	}
	return &updateError{resource: resource, err: err}
}

func (e *updateError) Error() string {
	return fmt.Sprintf("iamretry/policy: update of %s: %v", e.resource, e.err)
}

func (e *updateError) Unwrap() error { return e.err }

// GRPCStatus gives the error its cause's status with the whole message, so
// that status.Code(err) is the cause's code also when the cause is a REST
// error (a discovery client's *googleapi.Error, or a GAPIC REST client's
// APIError, whose own status only guesses from the HTTP status): then the
// code is the one its JSON body names (codes.CodeOf).
func (e *updateError) GRPCStatus() *status.Status {
	return updaters.Status(e.err, e.Error())
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

// leftError is returned to a caller whose context ended before its result
// was known: its gRPC code is the context's (CANCELED or DEADLINE_EXCEEDED)
// and it wraps the context's error and cause.
type leftError struct {
	ctxErr, cause error
	queued        bool // the caller left before its batch started
}

func left(ctx context.Context, queued bool) error {
	return &leftError{ctxErr: ctx.Err(), cause: context.Cause(ctx), queued: queued}
}

func (e *leftError) Error() string {
	if e.queued {
		return fmt.Sprintf("%v while queued; nothing of this update was written", e.cause)
	}
	return fmt.Sprintf("%v during the read-modify-write; this update may or may not have been written", e.cause)
}

func (e *leftError) Unwrap() []error {
	if e.cause == e.ctxErr {
		return []error{e.ctxErr}
	}
	return []error{e.ctxErr, e.cause}
}

func (e *leftError) GRPCStatus() *status.Status {
	return status.New(status.FromContextError(e.ctxErr).Code(), e.Error())
}
