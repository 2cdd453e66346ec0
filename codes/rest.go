package codes

import (
	"errors"
	"net/http"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/internal/googleerr"
)

// ofREST classifies a REST error node of an error chain: a
// *googleapi.Error, or gax's *apierror.APIError of a REST call. ok is false
// for any other node (a gRPC APIError is left to the status path).
func ofREST(e error) (c Class, ok bool) {
	if ge := restNode(e); ge != nil {
		return ofGoogleAPI(ge), true
	}
	if ae, isAPI := e.(*apierror.APIError); isAPI && ae.HTTPCode() > 0 {
		// Without the googleapi.Error (gax keeps it unexported when it does
		// not wrap it) the body's status is out of reach: its parsed details
		// and the HTTP status are what is left.
		return ofHTTP(ae.HTTPCode(), grpccodes.OK), true
	}
	return Permanent, false
}

// restNode returns the *googleapi.Error that node e is, or that a REST
// *apierror.APIError node e wraps; nil otherwise.
func restNode(e error) *googleapi.Error {
	switch x := e.(type) {
	case *googleapi.Error:
		return x
	case *apierror.APIError:
		var ge *googleapi.Error
		if x.HTTPCode() > 0 && errors.As(x.Unwrap(), &ge) {
			return ge
		}
	}
	return nil
}

// ofGoogleAPI classifies a REST error by its JSON body's status when it has
// one, else by its HTTP status.
func ofGoogleAPI(e *googleapi.Error) Class {
	st, _ := googleerr.ParseBody(e.Body)
	return ofHTTP(e.Code, st)
}

// ofHTTP classifies an HTTP error: by st, the gRPC code named by the body's
// "status", when it is not OK; else by the HTTP status. A 429 (or a body's
// RESOURCE_EXHAUSTED) is Transient: a quota rejection, retried once quota
// returns (the server's RetryInfo or Retry-After says when; without it, no
// sooner than 30 s).
func ofHTTP(httpCode int, st grpccodes.Code) Class {
	if st != grpccodes.OK {
		return Of(st)
	}
	switch httpCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
		http.StatusTooManyRequests:
		return Transient
	case http.StatusNotFound:
		return Propagation
	case http.StatusConflict:
		return Conflict
	}
	return Permanent
}
