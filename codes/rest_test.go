package codes

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
)

// restError is the error google.golang.org/api's generated clients return
// for an HTTP response with this status and body.
func restError(t *testing.T, code int, body string) *googleapi.Error {
	t.Helper()
	err := googleapi.CheckResponse(&http.Response{StatusCode: code, Body: io.NopCloser(bytes.NewBufferString(body)), Header: http.Header{}})
	ge, ok := err.(*googleapi.Error)
	if !ok {
		t.Fatalf("CheckResponse(%d) = %T %v", code, err, err)
	}
	return ge
}

// jsonError is a Google JSON error body (https://cloud.google.com/apis/design/errors#http_mapping).
func jsonError(code int, status, details string) string {
	return fmt.Sprintf(`{"error": {"code": %d, "message": "m", "status": %q, "details": [%s]}}`, code, status, details)
}

const retryInfoJSON = `{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "5s"}`

// TestOfErrorRESTStatusFirstThenHTTPCode: a REST error is classified by its
// JSON body's status when it has one (409 is ABORTED or ALREADY_EXISTS), and
// by its HTTP status only when it has none.
func TestOfErrorRESTStatusFirstThenHTTPCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		body string
		want Class
	}{
		{"409 ABORTED", 409, jsonError(409, "ABORTED", ""), Conflict},
		{"409 ALREADY_EXISTS", 409, jsonError(409, "ALREADY_EXISTS", ""), Permanent},
		{"400 FAILED_PRECONDITION", 400, jsonError(400, "FAILED_PRECONDITION", ""), Permanent},
		{"503 UNAVAILABLE", 503, jsonError(503, "UNAVAILABLE", ""), Transient},
		{"500 INTERNAL", 500, jsonError(500, "INTERNAL", ""), Transient},
		{"504 DEADLINE_EXCEEDED", 504, jsonError(504, "DEADLINE_EXCEEDED", ""), Transient},
		{"404 NOT_FOUND", 404, jsonError(404, "NOT_FOUND", ""), Propagation},
		{"403 PERMISSION_DENIED", 403, jsonError(403, "PERMISSION_DENIED", ""), Permanent},
		{"500 body says UNKNOWN", 500, jsonError(500, "UNKNOWN", ""), Transient},
		{"500 body says DATA_LOSS", 500, jsonError(500, "DATA_LOSS", ""), Permanent},
		{"429 RESOURCE_EXHAUSTED", 429, jsonError(429, "RESOURCE_EXHAUSTED", ""), Transient},
		{"429 RESOURCE_EXHAUSTED with RetryInfo", 429, jsonError(429, "RESOURCE_EXHAUSTED", retryInfoJSON), Transient},
		// No status in the body: the HTTP status decides.
		{"500 plain", 500, "internal error", Transient},
		{"502 html", 502, "<html>Bad Gateway</html>", Transient},
		{"503 plain", 503, "", Transient},
		{"504 plain", 504, "", Transient},
		{"404 plain", 404, "Not Found", Propagation},
		{"409 plain", 409, `{"error": {"code": 409, "message": "conflict"}}`, Conflict},
		{"429 plain", 429, "slow down", Transient},
		{"429 RetryInfo, no status", 429, `{"error": {"code": 429, "message": "q", "details": [` + retryInfoJSON + `]}}`, Transient},
		{"400 plain", 400, "bad", Permanent},
		{"401 plain", 401, "", Permanent},
		{"501 plain", 501, "", Permanent},
		{"status not a gRPC name", 503, jsonError(503, "NOT_A_CODE", ""), Transient},
	} {
		ge := restError(t, tc.code, tc.body)
		if got := OfError(ge); got != tc.want {
			t.Errorf("%s: OfError(googleapi.Error) = %v, want %v", tc.name, got, tc.want)
		}
		if got := OfError(fmt.Errorf("call: %w", ge)); got != tc.want {
			t.Errorf("%s: OfError(wrapped googleapi.Error) = %v, want %v", tc.name, got, tc.want)
		}
		// gax's APIError as GAPIC REST clients return it, wrapping the
		// googleapi.Error (its own GRPCStatus guesses the code from the HTTP
		// status alone: 409 is always ABORTED there).
		ae, ok := apierror.FromError(ge)
		if !ok {
			t.Fatalf("%s: apierror.FromError failed", tc.name)
		}
		if got := OfError(ae); got != tc.want {
			t.Errorf("%s: OfError(APIError) = %v, want %v", tc.name, got, tc.want)
		}
		// The googleapi.Error as generated discovery clients return it: it
		// wraps an APIError (gensupport.WrapError).
		ge2 := restError(t, tc.code, tc.body)
		if ae2, ok := apierror.ParseError(ge2, false); ok {
			ge2.Wrap(ae2)
		}
		if got := OfError(ge2); got != tc.want {
			t.Errorf("%s: OfError(googleapi.Error wrapping APIError) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestOfErrorRESTAPIErrorWithoutBodyGoesByHTTPCode: an APIError that does
// not wrap its googleapi.Error is classified by its HTTP status and details.
func TestOfErrorRESTAPIErrorWithoutBodyGoesByHTTPCode(t *testing.T) {
	for _, tc := range []struct {
		code int
		body string
		want Class
	}{
		{503, "", Transient},
		{502, "", Transient},
		{404, "", Propagation},
		{409, "", Conflict},
		{429, "", Transient},
		{429, `{"error": {"code": 429, "message": "q", "status": "RESOURCE_EXHAUSTED", "details": [` + retryInfoJSON + `]}}`, Transient},
		{403, "", Permanent},
	} {
		ae, ok := apierror.ParseError(restError(t, tc.code, tc.body), false)
		if !ok {
			t.Fatal("ParseError failed")
		}
		if got := OfError(ae); got != tc.want {
			t.Errorf("HTTP %d: OfError(unwrapping APIError) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

// TestOfError429RetryAfterIsRetryInfo (issue 19 item 5; issue 28): a REST
// 429 is Transient with or without a Retry-After (seconds or an HTTP date),
// malformed or not, wherever the error is classified (the RoundTripper,
// Retrier.Do, an Updater over a REST client): the header changes the wait,
// not the class.
func TestOfError429RetryAfterIsRetryInfo(t *testing.T) {
	for _, tc := range []struct {
		name, retryAfter string
		want             Class
	}{
		{"seconds", "7", Transient},
		{"zero", "0", Transient},
		{"HTTP date", "Wed, 02 Dec 2026 10:00:00 GMT", Transient},
		{"none", "", Transient},
		{"malformed", "soon", Transient},
		{"negative", "-3", Transient},
	} {
		ge := restError(t, 429, jsonError(429, "RESOURCE_EXHAUSTED", ""))
		if tc.retryAfter != "" {
			ge.Header.Set("Retry-After", tc.retryAfter)
		}
		if got := OfError(ge); got != tc.want {
			t.Errorf("%s: OfError = %v, want %v", tc.name, got, tc.want)
		}
		if got := OfError(fmt.Errorf("call: %w", ge)); got != tc.want {
			t.Errorf("%s: OfError(wrapped) = %v, want %v", tc.name, got, tc.want)
		}
	}
	// A 503 with Retry-After stays Transient, a 400 Permanent.
	ge := restError(t, 400, jsonError(400, "INVALID_ARGUMENT", ""))
	ge.Header.Set("Retry-After", "3")
	if OfError(ge) != Permanent {
		t.Error("400 with Retry-After: want Permanent")
	}
}
