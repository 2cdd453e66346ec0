package deny

import (
	"context"
	"fmt"

	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// updateError is what Update returns for a failure met after its checks:
// it names the policy and wraps the cause, so that errors.Is and errors.As
// see the cause and status.Code sees its gRPC code, over REST too (where
// gax guesses a code from the HTTP status: a 400 FAILED_PRECONDITION would
// read INVALID_ARGUMENT).
type updateError struct {
	name string
	err  error
	// ctx is the context's error when the context ended and the cause
	// reports it by its code alone (gRPC's status errors do not wrap the
	// context's error; a REST client's do): errors.Is finds it either way.
	ctx error
}

func wrapErr(ctx context.Context, name string, err error) error {
	if err == nil {
		return nil
	}
	return &updateError{name: name, err: err, ctx: updaters.EndedBy(ctx, err)}
}

func (e *updateError) Error() string {
	return fmt.Sprintf("iamretry: deny.Update(%s): %v", e.name, e.err)
}

func (e *updateError) Unwrap() error { return e.err }

// Is reports whether target is the error of the context that ended the
// call (see wrapErr).
func (e *updateError) Is(target error) bool { return e.ctx != nil && target == e.ctx }

// GRPCStatus gives the error its cause's status with the whole message
// (its details kept), or, for a REST error, the code codes.CodeOf reads
// from its JSON body.
func (e *updateError) GRPCStatus() *status.Status {
	return updaters.Status(e.err, e.Error())
}
