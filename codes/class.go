package codes

import (
	"context"
	"errors"
	"strconv"

	"github.com/googleapis/gax-go/v2/apierror"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/googleerr"
)

// Class is what a retrying client should do about a failure.
type Class uint8

const (
	// Permanent failures are returned at once: retrying cannot help.
	Permanent Class = iota
	// Transient failures (HTTP 500, 502, 503, 504; gRPC UNAVAILABLE,
	// INTERNAL, DEADLINE_EXCEEDED, UNKNOWN) are retried with
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
// table. Codes it does not know, OK among them, are Permanent; so is
// DATA_LOSS (retrying cannot restore lost data).
func Of(code grpccodes.Code) Class {
	switch code {
	case grpccodes.Unavailable, grpccodes.Internal, grpccodes.DeadlineExceeded, grpccodes.Unknown:
		// UNKNOWN: what grpc-go reports for a proxy's bare HTTP 500, and
		// what Google's APIs put in the body of a 500 they cannot name:
		// an ambiguous outcome like INTERNAL.
		return Transient
	case grpccodes.ResourceExhausted:
		// Quota: a definite rejection, retried once quota returns (the
		// server's delay, else no sooner than 30 s).
		return Transient
	case grpccodes.NotFound:
		return Propagation
	case grpccodes.Aborted:
		return Conflict
	default:
		return Permanent
	}
}

// OfError returns the retry class of an error, from the first error of its
// chain (in errors.As order) that carries a code: a gRPC status by its code
// with Of, except the client-side failures the package doc lists (Permanent);
// a REST error (*googleapi.Error, gax's *apierror.APIError) by its JSON body's
// "status" when it has one, else by its HTTP status as in the package's
// table (429 Transient). A nil error, one that carries no code, and the
// caller's context.Canceled or context.DeadlineExceeded however wrapped are
// Permanent. A gRPC status error as gRPC returns it costs no allocation.
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
	// Fast path: a status error as gRPC returns it, no wrapping, no
	// allocation. gax's APIError also has a GRPCStatus method, whose code it
	// guesses from the HTTP status for a REST error: it goes the REST way.
	if se, ok := err.(googleerr.GRPCStatuser); ok {
		if _, isAPI := err.(*apierror.APIError); !isAPI {
			return ofStatus(se.GRPCStatus())
		}
	}
	s := speaker(err)
	if s == nil {
		return Permanent
	}
	if c, ok := ofREST(s); ok {
		return c
	}
	return ofStatus(s.(googleerr.GRPCStatuser).GRPCStatus())
}

// ofStatus classifies a gRPC status: by its code, with the exception
// OfError lists (client-side failures).
func ofStatus(st *status.Status) Class {
	code := st.Code()
	switch code {
	case grpccodes.Unavailable, grpccodes.Internal, grpccodes.ResourceExhausted:
		if clientSideFailure(code, st.Message()) {
			return Permanent
		}
	}
	return Of(code)
}
