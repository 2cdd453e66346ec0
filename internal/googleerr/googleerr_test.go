package googleerr

import (
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// RetryInfo is found on either transport, wrapped or not.
func TestRetryDelayBothTransports(t *testing.T) {
	st, err := status.New(grpccodes.ResourceExhausted, "quota").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(3 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	rest := &googleapi.Error{Code: 429, Details: []any{map[string]any{"@type": RetryInfoType, "retryDelay": "2s"}}}
	for _, c := range []struct {
		err  error
		want time.Duration
	}{
		{st.Err(), 3 * time.Second},
		{fmt.Errorf("call: %w", st.Err()), 3 * time.Second},
		{rest, 2 * time.Second},
		{fmt.Errorf("call: %w", rest), 2 * time.Second},
	} {
		if d, ok := RetryDelay(c.err); !ok || d != c.want {
			t.Errorf("RetryDelay(%v) = %v, %v; want %v", c.err, d, ok, c.want)
		}
	}
	if !JSONHasRetryInfo(RESTDetails(rest)) {
		t.Error("JSONHasRetryInfo: the REST error's RetryInfo not found")
	}
}

// The JSON error body's status and RetryInfo are read; anything else has neither.
func TestParseBody(t *testing.T) {
	code, ri := ParseBody(`{"error": {"code": 409, "status": "ALREADY_EXISTS", "details": [{"@type": "` + RetryInfoType + `"}]}}`)
	if code != grpccodes.AlreadyExists || !ri {
		t.Errorf("ParseBody = %v, %v", code, ri)
	}
	if code, ri := ParseBody("<html>"); code != grpccodes.OK || ri {
		t.Errorf("ParseBody(html) = %v, %v", code, ri)
	}
}

// TestRetryAfterAgreesWithValid: the wait a Retry-After sets and whether the
// classifier counts it (ValidRetryAfter) come from one reading: a value that
// is not RFC 9110's 1*DIGIT or an HTTP date ("+5", "-0", "5 ") sets no wait
// either.
func TestRetryAfterAgreesWithValid(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, v := range []string{"", "0", "7", "+5", "-0", "-3", " 5", "5 ", "soon", "99999999999999999999", "Wed, 02 Dec 2026 10:00:00 GMT"} {
		_, ok := RetryAfter(v, now)
		if valid := ValidRetryAfter(v); ok != valid {
			t.Errorf("Retry-After %q: RetryAfter ok = %v, ValidRetryAfter = %v", v, ok, valid)
		}
	}
}
