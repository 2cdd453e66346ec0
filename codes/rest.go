package codes

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
)

// retryInfoType is the @type of a google.rpc.RetryInfo in a JSON error body.
const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

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
		return ofHTTP(ae.HTTPCode(), grpccodes.OK, ae.Details().RetryInfo != nil), true
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
//
// A 429 whose response carried a valid Retry-After header counts as one
// with RetryInfo: the server said when to come back, over HTTP.
func ofGoogleAPI(e *googleapi.Error) Class {
	st, retryInfo := parseErrorBody(e.Body)
	if !retryInfo {
		retryInfo = detailsHaveRetryInfo(e.Details)
	}
	if !retryInfo && e.Code == http.StatusTooManyRequests {
		retryInfo = validRetryAfter(e.Header.Get("Retry-After"))
	}
	return ofHTTP(e.Code, st, retryInfo)
}

// validRetryAfter reports whether v is a Retry-After value of RFC 9110:
// delay-seconds (digits) or an HTTP date. Whether the date is past does not
// matter here (no clock is read): it still says when to come back.
func validRetryAfter(v string) bool {
	if v == "" {
		return false
	}
	if strings.Trim(v, "0123456789") == "" {
		return true
	}
	_, err := http.ParseTime(v)
	return err == nil
}

// ofHTTP classifies an HTTP error: by st, the gRPC code named by the body's
// "status", when it is not OK; else by the HTTP status. retryInfo says
// whether the error carries a google.rpc.RetryInfo.
func ofHTTP(httpCode int, st grpccodes.Code, retryInfo bool) Class {
	if st != grpccodes.OK {
		if st == grpccodes.ResourceExhausted {
			return quota(retryInfo)
		}
		return Of(st)
	}
	switch httpCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return Transient
	case http.StatusNotFound:
		return Propagation
	case http.StatusConflict:
		return Conflict
	case http.StatusTooManyRequests:
		return quota(retryInfo)
	}
	return Permanent
}

// quota classifies RESOURCE_EXHAUSTED (429): Transient only when the server
// said when to come back (RetryInfo).
func quota(retryInfo bool) Class {
	if retryInfo {
		return Transient
	}
	return Permanent
}

// errorBody is the part of Google's JSON error body
// (https://cloud.google.com/apis/design/errors#http_mapping) that classes
// depend on.
type errorBody struct {
	Error struct {
		Status  json.RawMessage `json:"status"`
		Details []struct {
			Type string `json:"@type"`
		} `json:"details"`
	} `json:"error"`
}

// parseErrorBody returns the gRPC code named by the body's "status" (OK when
// there is none, or none that gRPC knows) and whether its details hold a
// RetryInfo. A body that is not Google's JSON error has neither.
func parseErrorBody(body string) (grpccodes.Code, bool) {
	if !strings.HasPrefix(strings.TrimSpace(body), "{") {
		return grpccodes.OK, false
	}
	var b errorBody
	if json.Unmarshal([]byte(body), &b) != nil {
		return grpccodes.OK, false
	}
	var st grpccodes.Code
	if len(b.Error.Status) > 0 && b.Error.Status[0] == '"' {
		if st.UnmarshalJSON(b.Error.Status) != nil {
			st = grpccodes.OK
		}
	}
	retryInfo := false
	for _, d := range b.Error.Details {
		if d.Type == retryInfoType {
			retryInfo = true
		}
	}
	return st, retryInfo
}

// detailsHaveRetryInfo looks for a RetryInfo in googleapi.Error.Details, the
// body's details as encoding/json decoded them.
func detailsHaveRetryInfo(details []any) bool {
	for _, d := range details {
		if m, ok := d.(map[string]any); ok && m["@type"] == retryInfoType {
			return true
		}
	}
	return false
}
