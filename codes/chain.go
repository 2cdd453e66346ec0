package codes

import (
	"context"
	"errors"
	"net/http"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/internal/googleerr"
)

// speaker returns the first error of err's chain, in the order errors.As
// walks it (depth first), that says what went wrong in terms this package
// knows: a gRPC status (an error with a GRPCStatus method), a
// *googleapi.Error, or gax's *apierror.APIError. A wrapper that carries its
// own status (one that reports ABORTED around the server's
// FAILED_PRECONDITION, say) thus speaks before what it wraps, whether that
// is a gRPC or a REST error. nil when none does.
func speaker(err error) error {
	for err != nil {
		switch x := err.(type) {
		case *googleapi.Error, *apierror.APIError, googleerr.GRPCStatuser:
			return err
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if s := speaker(e); s != nil {
					return s
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}

// CodeOf returns the gRPC code of an error, whichever transport it came
// from: a gRPC status's code; for a REST error (*googleapi.Error, or gax's
// *apierror.APIError of a REST call, whose own GRPCStatus only guesses from
// the HTTP status) the code its JSON error body names in "status" (409 is
// ABORTED or ALREADY_EXISTS, 400 INVALID_ARGUMENT or FAILED_PRECONDITION),
// else the code Google maps its HTTP status from. It sees through wrapping
// as OfError does: the first error of the chain that carries a code speaks.
// A caller's context error is CANCELED or DEADLINE_EXCEEDED; nil is OK; an
// error that carries no code is UNKNOWN.
func CodeOf(err error) grpccodes.Code {
	if err == nil {
		return grpccodes.OK
	}
	if se, ok := err.(googleerr.GRPCStatuser); ok {
		if _, isAPI := err.(*apierror.APIError); !isAPI {
			return se.GRPCStatus().Code() // fast path: a status error as gRPC returns it
		}
	}
	s := speaker(err)
	if s == nil {
		switch {
		case errors.Is(err, context.Canceled):
			return grpccodes.Canceled
		case errors.Is(err, context.DeadlineExceeded):
			return grpccodes.DeadlineExceeded
		}
		return grpccodes.Unknown
	}
	if ge := restNode(s); ge != nil {
		if st, _ := googleerr.ParseBody(ge.Body); st != grpccodes.OK {
			return st
		}
		return codeOfHTTP(ge.Code)
	}
	if ae, ok := s.(*apierror.APIError); ok && ae.HTTPCode() > 0 {
		return codeOfHTTP(ae.HTTPCode())
	}
	return status.Code(s)
}

// codeOfHTTP is the gRPC code Google's APIs answer with an HTTP status when
// the body names none (google/rpc/code.proto's mapping, read backwards):
// gax's (apierror), except where its ranges stand for a status code.proto
// names: 499 is CANCELLED and 502 UNAVAILABLE (gax: FAILED_PRECONDITION and
// INTERNAL). The failure path only: it allocates.
func codeOfHTTP(h int) grpccodes.Code {
	switch h {
	case 499:
		return grpccodes.Canceled
	case http.StatusBadGateway:
		return grpccodes.Unavailable
	}
	ae, ok := apierror.ParseError(&googleapi.Error{Code: h}, false)
	if !ok {
		return grpccodes.Unknown
	}
	return ae.GRPCStatus().Code()
}
