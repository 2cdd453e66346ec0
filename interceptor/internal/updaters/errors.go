package updaters

import (
	"context"
	"fmt"

	"google.golang.org/grpc/status"
)

// UpdateError is the one shape of every Updater's errors: PKG: update of
// NAME: CAUSE. It wraps the cause, so errors.Is and errors.As see it, and
// has the cause's status (Status), so status.Code sees its code over gRPC
// and REST alike.
type UpdateError struct {
	pkg  string // "iamretry/policy", "iamretry/role", "iamretry/deny"
	name string // the object's name
	err  error
	// ctx is the context's error when the context ended and the cause
	// reports it by its code alone (gRPC's status errors do not wrap the
	// context's error; a REST client's do): errors.Is finds it either way.
	ctx error
}

// Wrap names the object name of package pkg in err; nil stays nil. ctx,
// when not nil, is the context the failed call was made for (EndedBy).
func Wrap(ctx context.Context, pkg, name string, err error) error {
	if err == nil {
		return nil
	}
	e := &UpdateError{pkg: pkg, name: name, err: err}
	if ctx != nil {
		e.ctx = EndedBy(ctx, err)
	}
	return e
}

func (e *UpdateError) Error() string {
	return fmt.Sprintf("%s: update of %s: %v", e.pkg, e.name, e.err)
}

func (e *UpdateError) Unwrap() error { return e.err }

// Is reports whether target is the error of the context that ended the
// call (see Wrap).
func (e *UpdateError) Is(target error) bool { return e.ctx != nil && target == e.ctx }

// GRPCStatus gives the error its cause's status with the whole message
// (Status).
func (e *UpdateError) GRPCStatus() *status.Status { return Status(e.err, e.Error()) }

// LeftError is the cause of the error of an Update whose context ended
// before its result was known: its gRPC code is the context's (CANCELED or
// DEADLINE_EXCEEDED) and it wraps the context's error and cause.
type LeftError struct {
	ctxErr, cause error
	queued        bool // before its batch started: nothing of it was written
}

// Left is the LeftError of ctx, which has ended; queued: the update never
// got into a batch (or never started).
func Left(ctx context.Context, queued bool) error {
	return &LeftError{ctxErr: ctx.Err(), cause: context.Cause(ctx), queued: queued}
}

func (e *LeftError) Error() string {
	if e.queued {
		return fmt.Sprintf("%v before the update was sent; nothing of this update was written", e.cause)
	}
	return fmt.Sprintf("%v during the read-modify-write; this update may or may not have been written", e.cause)
}

func (e *LeftError) Unwrap() []error {
	if e.cause == e.ctxErr {
		return []error{e.ctxErr}
	}
	return []error{e.ctxErr, e.cause}
}

func (e *LeftError) GRPCStatus() *status.Status {
	return status.New(status.FromContextError(e.ctxErr).Code(), e.Error())
}
