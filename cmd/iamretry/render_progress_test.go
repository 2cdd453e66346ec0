package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// engineError is a wrapper with a status of its own (NOT_FOUND) around the
// server's error: serverCode must show the server's code through it.
type engineError struct{ server error }

func (e engineError) Error() string              { return e.server.Error() }
func (e engineError) Unwrap() error              { return e.server }
func (e engineError) GRPCStatus() *status.Status { return status.New(codes.NotFound, e.server.Error()) }

// TestProgressLines: the policy command's progress lines, drawn from the
// same attempt events as the demo's timeline.
func TestProgressLines(t *testing.T) {
	refused := status.Error(codes.InvalidArgument, "Service account x@p.iam.gserviceaccount.com does not exist.")
	for _, c := range []struct {
		a    interceptor.Attempt
		want string
	}{
		{interceptor.Attempt{Method: "/google.iam.v1.IAMPolicy/GetIamPolicy", N: 1, Err: status.Error(codes.Unavailable, "down"),
			Class: iamcodes.Transient, Reason: interceptor.Retry, Wait: 1250 * time.Millisecond},
			"iamretry: IAMPolicy.GetIamPolicy attempt 1: UNAVAILABLE (HTTP 503, Transient): retrying in 1.25s\n"},
		{interceptor.Attempt{Method: "/google.iam.v1.IAMPolicy/GetIamPolicy", N: 2, Reason: interceptor.Succeeded},
			"iamretry: IAMPolicy.GetIamPolicy attempt 2: succeeded\n"},
		{interceptor.Attempt{Method: policy.UpdateMethod, N: 1, Err: status.Error(codes.Aborted, "etag"),
			Class: iamcodes.Conflict, Reason: interceptor.NotRetryable},
			"iamretry: policy.Update attempt 1: ABORTED (HTTP 409, Conflict): a concurrent change\n"},
		{interceptor.Attempt{Method: policy.UpdateMethod, N: 1, Err: engineError{refused},
			Class: iamcodes.Propagation, Reason: interceptor.NotRetryable},
			"iamretry: policy.Update attempt 1: INVALID_ARGUMENT (HTTP 400, Propagation): gave up: not retryable\n"},
		{interceptor.Attempt{Method: "/google.iam.v1.IAMPolicy/GetIamPolicy", N: 6, Err: status.Error(codes.Unavailable, "down"),
			Class: iamcodes.Transient, Reason: interceptor.DeadlineReached},
			"iamretry: IAMPolicy.GetIamPolicy attempt 6: UNAVAILABLE (HTTP 503, Transient): gave up: retry deadline reached\n"},
	} {
		var out bytes.Buffer
		s := newStream(progressRenderer{w: &out})
		s.emit(failedAttempt(0, 0, "", c.a))
		s.emit(noteEvent{Text: "drawn by the demo only"})
		if out.String() != c.want || s.err() != nil {
			t.Errorf("got %q (%v), want %q", out.String(), s.err(), c.want)
		}
	}
}

// TestServerCode: the code shown is the server's, under whatever status the
// engine put around it; an error without a status is UNKNOWN, none is OK.
func TestServerCode(t *testing.T) {
	refused := status.Error(codes.InvalidArgument, "does not exist")
	for _, c := range []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{refused, codes.InvalidArgument},
		{engineError{refused}, codes.InvalidArgument},
		{errors.Join(refused), codes.InvalidArgument},
		{errors.New("plain"), codes.Unknown},
	} {
		if got := serverCode(c.err); got != c.want {
			t.Errorf("serverCode(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if !strings.Contains(callName("writer-2", "/google.iam.v1.IAMPolicy/SetIamPolicy"), "writer-2 SetIamPolicy") {
		t.Error(callName("writer-2", "/google.iam.v1.IAMPolicy/SetIamPolicy"))
	}
}

// TestMethodNames: the three short names of a method, all cut by
// methodParts, for each shape of name the CLI meets.
func TestMethodNames(t *testing.T) {
	for _, c := range []struct{ m, call, progress, metric string }{
		{"/google.iam.v1.IAMPolicy/GetIamPolicy", "GetIamPolicy", "IAMPolicy.GetIamPolicy", "IAMPolicy/GetIamPolicy"},
		{"google.iam.admin.v1.IAM/GetServiceAccount", "IAM.GetServiceAccount", "IAM.GetServiceAccount", "IAM/GetServiceAccount"},
		{policy.UpdateMethod, "policy.Update", "policy.Update", policy.UpdateMethod},
		{"POST /v3/projects/p:getIamPolicy", "POST /v3/projects/p:getIamPolicy", "POST /v3/projects/p:getIamPolicy", "POST /v3/projects/p:getIamPolicy"},
		{"other", "other", "other", "other"},
	} {
		if got := callName("", c.m); got != c.call {
			t.Errorf("callName(%q) = %q, want %q", c.m, got, c.call)
		}
		if got := shortMethod(c.m); got != c.progress {
			t.Errorf("shortMethod(%q) = %q, want %q", c.m, got, c.progress)
		}
		if got := shortGRPCMethod(c.m); got != c.metric {
			t.Errorf("shortGRPCMethod(%q) = %q, want %q", c.m, got, c.metric)
		}
	}
}
