package codes

import (
	"context"
	"errors"
	"strconv"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Class is what a retrying client should do about a failure.
type Class uint8

const (
	// Permanent failures are returned at once: retrying cannot help.
	Permanent Class = iota
	// Transient failures (HTTP 500, 502, 503, 504) are retried with
	// truncated exponential backoff with jitter.
	Transient
	// Propagation failures (HTTP 404) may mean that a resource just created is
	// not visible yet, since IAM reads are eventually consistent; they are
	// retried only when the caller opts in.
	Propagation
	// Conflict failures (HTTP 409 ABORTED) mean a concurrent policy change: the
	// whole read-modify-write is run again, never the write alone.
	Conflict
)

var classNames = [...]string{
	Permanent:   "Permanent",
	Transient:   "Transient",
	Propagation: "Propagation",
	Conflict:    "Conflict",
}

// String returns the class's name, such as "Transient", or "Class(N)" for a
// value that is not one of the four classes.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Of returns the retry class of a gRPC status code, as in the package's
// table. Codes it does not know, OK among them, are Permanent.
func Of(code grpccodes.Code) Class {
	switch code {
	case grpccodes.Unavailable, grpccodes.Internal, grpccodes.DeadlineExceeded:
		return Transient
	case grpccodes.NotFound:
		return Propagation
	case grpccodes.Aborted:
		return Conflict
	default:
		return Permanent
	}
}

// OfError returns the retry class of an error. It sees through wrapping
// (fmt.Errorf("...: %w", st.Err())) to the first gRPC status it finds and
// classifies its code with Of. A nil error, an error that carries no gRPC
// status, and a context error of the caller (context.Canceled or
// context.DeadlineExceeded, however wrapped) are Permanent: retrying cannot
// help them.
func OfError(err error) Class {
	if err == nil {
		return Permanent
	}
	// A caller's context error is never retried, even when it also carries a
	// status (gRPC's own context errors are status errors with codes
	// Canceled/DeadlineExceeded but do not wrap the context error).
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Permanent
	}
	// Fast path: a status error as gRPC returns it, no wrapping, no allocation.
	if se, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return Of(se.GRPCStatus().Code())
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		return Of(se.GRPCStatus().Code())
	}
	return Permanent
}
