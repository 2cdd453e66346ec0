// Package googleerr reads what Google's APIs put in their errors, over
// gRPC and over REST, in one place: the gRPC status of an error chain, the
// google.rpc.RetryInfo delay (a status detail, a JSON error body's details,
// gax's parsed ones), the google.rpc.ErrorInfo reason, the JSON error body's
// "status", and the Retry-After header. Package codes classifies with it and
// package interceptor schedules with it; the fake server (iamtest)
// writes these payloads on its own and never imports it.
package googleerr

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The @type of the details read in a JSON error body.
const (
	RetryInfoType = "type.googleapis.com/google.rpc.RetryInfo"
	ErrorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
)

// maxDuration is the longest time.Duration: a delay too long to count.
const maxDuration = time.Duration(math.MaxInt64)

// GRPCStatuser is an error that carries a gRPC status.
type GRPCStatuser interface{ GRPCStatus() *status.Status }

// StatusOf returns err's gRPC status, or nil. A status error as gRPC
// returns it costs no allocation; a wrapped one is found with errors.As.
func StatusOf(err error) *status.Status {
	if se, ok := err.(GRPCStatuser); ok {
		return se.GRPCStatus()
	}
	return StatusAs(err)
}

// StatusAs returns the status of the first error of err's chain that
// carries one, or nil.
func StatusAs(err error) *status.Status {
	var se GRPCStatuser
	if errors.As(err, &se) {
		return se.GRPCStatus()
	}
	return nil
}

// RetryDelay returns the retry_delay of a google.rpc.RetryInfo detail of
// err, if it carries one > 0: in a gRPC status's details, or in a REST
// error's (a *googleapi.Error's JSON details, a REST *apierror.APIError's
// parsed ones). A status error as gRPC returns it, without details, costs
// no allocation.
func RetryDelay(err error) (time.Duration, bool) {
	if ae, ok := err.(*apierror.APIError); ok {
		return positive(ae.Details().RetryInfo.GetRetryDelay().AsDuration())
	}
	if st := StatusOf(err); st != nil {
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				return positive(ri.GetRetryDelay().AsDuration())
			}
		}
		if _, plain := err.(GRPCStatuser); plain {
			return 0, false // a gRPC status error as gRPC returns it: no REST error inside
		}
	}
	return restRetryDelay(err)
}

// restRetryDelay finds RetryInfo in the first REST error of err's chain.
func restRetryDelay(err error) (time.Duration, bool) {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return JSONRetryDelay(ge.Details)
	}
	var ae *apierror.APIError
	if errors.As(err, &ae) {
		return positive(ae.Details().RetryInfo.GetRetryDelay().AsDuration())
	}
	return 0, false
}

func positive(d time.Duration) (time.Duration, bool) { return d, d > 0 }

// StatusHasRetryInfo reports whether st carries a google.rpc.RetryInfo,
// whatever its delay.
func StatusHasRetryInfo(st *status.Status) bool {
	for _, d := range st.Details() {
		if _, ok := d.(*errdetails.RetryInfo); ok {
			return true
		}
	}
	return false
}

// JSONHasRetryInfo reports whether details (a *googleapi.Error's Details,
// the JSON error body's details as encoding/json decoded them) hold a
// google.rpc.RetryInfo, whatever its delay.
func JSONHasRetryInfo(details []any) bool {
	for _, d := range details {
		if m, ok := d.(map[string]any); ok && m["@type"] == RetryInfoType {
			return true
		}
	}
	return false
}

// JSONRetryDelay finds a google.rpc.RetryInfo of delay > 0 in the details
// of a JSON error body, as Google's REST APIs write it:
// {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}.
func JSONRetryDelay(details []any) (time.Duration, bool) {
	for _, d := range details {
		m, ok := d.(map[string]any)
		if !ok || m["@type"] != RetryInfoType {
			continue
		}
		s, _ := m["retryDelay"].(string)
		if dd, err := time.ParseDuration(s); err == nil && dd > 0 {
			return dd, true
		}
	}
	return 0, false
}

// RESTDetails returns the JSON details of the first *googleapi.Error in
// err's chain.
func RESTDetails(err error) []any {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Details
	}
	return nil
}

// CodeAndReason returns err's gRPC code (a REST error's is mapped from its
// HTTP status, as gax maps it) and its google.rpc.ErrorInfo reason ("" when
// it has none); ok is false when err is neither a gRPC status nor a REST
// error.
func CodeAndReason(err error) (grpccodes.Code, string, bool) {
	var ae *apierror.APIError
	if !errors.As(err, &ae) {
		var ok bool
		if ae, ok = apierror.ParseError(err, false); !ok {
			return grpccodes.Unknown, "", false
		}
	}
	reason := ae.Reason()
	if reason == "" {
		reason = googleAPIReason(err)
	}
	return ae.GRPCStatus().Code(), reason, true
}

// googleAPIReason returns the ErrorInfo reason in the parsed Details of a
// *googleapi.Error in err's chain, for one whose Body gax could not read.
func googleAPIReason(err error) string {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return ""
	}
	for _, d := range ge.Details {
		if m, ok := d.(map[string]any); ok && m["@type"] == ErrorInfoType {
			if r, ok := m["reason"].(string); ok {
				return r
			}
		}
	}
	return ""
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

// ParseBody returns the gRPC code named by a JSON error body's "status" (OK
// when there is none, or none that gRPC knows) and whether its details hold
// a RetryInfo. A body that is not Google's JSON error has neither.
func ParseBody(body string) (grpccodes.Code, bool) {
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
		if d.Type == RetryInfoType {
			retryInfo = true
		}
	}
	return st, retryInfo
}

// RetryAfter reads a Retry-After value of RFC 9110: delay-seconds (1*DIGIT)
// or an HTTP date (counted from now). A delay too long to count is the
// longest Duration. Anything else ("+5", "-0", "soon") is no value.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if strings.Trim(v, "0123456789") == "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s > int64(maxDuration/time.Second) {
			return maxDuration, true // only digits: too many to count is longer than any deadline
		}
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ValidRetryAfter reports whether v is a Retry-After value RetryAfter
// reads. Whether a date is past does not matter (no clock is read): it
// still says when to come back.
func ValidRetryAfter(v string) bool {
	_, ok := RetryAfter(v, time.Time{})
	return ok
}

// ErrRetryAfter reads the Retry-After header of the response the first
// *googleapi.Error in err's chain was built from (it keeps the headers). A
// date is counted from now.
func ErrRetryAfter(err error, now time.Time) (time.Duration, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Header == nil {
		return 0, false
	}
	return RetryAfter(ge.Header.Get("Retry-After"), now)
}
