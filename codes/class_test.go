package codes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func TestOfTable(t *testing.T) {
	want := map[grpccodes.Code]Class{
		grpccodes.Unavailable:       Transient,
		grpccodes.Internal:          Transient,
		grpccodes.DeadlineExceeded:  Transient,
		grpccodes.Unknown:           Transient, // grpc-go's code for a proxy's bare HTTP 500 (issue 19)
		grpccodes.NotFound:          Propagation,
		grpccodes.Aborted:           Conflict,
		grpccodes.ResourceExhausted: Transient, // quota: a definite rejection (issue 28)
	}
	for c := grpccodes.Code(0); c <= 16; c++ {
		w, ok := want[c]
		if !ok {
			w = Permanent
		}
		if got := Of(c); got != w {
			t.Errorf("Of(%v) = %v, want %v", c, got, w)
		}
	}
	if Of(grpccodes.Code(99)) != Permanent {
		t.Error("unknown code should be Permanent")
	}
}

func TestOfError(t *testing.T) {
	unavailable := status.Error(grpccodes.Unavailable, "down")
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Permanent},
		{"status", unavailable, Transient},
		{"wrapped", fmt.Errorf("get policy: %w", unavailable), Transient},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", status.Error(grpccodes.Aborted, "x"))), Conflict},
		{"joined", errors.Join(errors.New("x"), status.Error(grpccodes.NotFound, "nf")), Propagation},
		{"plain", errors.New("boom"), Permanent},
		{"context canceled", context.Canceled, Permanent},
		{"context deadline", context.DeadlineExceeded, Permanent},
		{"wrapped context deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), Permanent},
		{"server 504", status.Error(grpccodes.DeadlineExceeded, "upstream timeout"), Transient},
		{"permission", status.Error(grpccodes.PermissionDenied, "no"), Permanent},
	} {
		if got := OfError(tc.err); got != tc.want {
			t.Errorf("%s: OfError = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestOfErrorNoAlloc(t *testing.T) {
	err := status.Error(grpccodes.Unavailable, "down")
	if n := testing.AllocsPerRun(100, func() { _ = OfError(err) }); n != 0 {
		t.Fatalf("OfError allocates %v times", n)
	}
}

func TestHTTPStatus(t *testing.T) {
	want := []int{200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401}
	for c, w := range want {
		if got := HTTPStatus(grpccodes.Code(c)); got != w {
			t.Errorf("HTTPStatus(%v) = %d, want %d", grpccodes.Code(c), got, w)
		}
	}
	if HTTPStatus(grpccodes.Code(42)) != 500 {
		t.Error("unknown code")
	}
}

func TestString(t *testing.T) {
	for c, w := range map[Class]string{Permanent: "Permanent", Transient: "Transient", Propagation: "Propagation", Conflict: "Conflict", Class(9): "Class(9)"} {
		if c.String() != w {
			t.Errorf("%d: %q", c, c.String())
		}
	}
}

// TestResourceExhaustedIsTransient (issue 28): a quota error is retried,
// with RetryInfo or without (the interceptor then waits at least 30 s);
// gRPC's own message size limits, which quota never lifts, are not.
func TestResourceExhaustedIsTransient(t *testing.T) {
	bare := status.Error(grpccodes.ResourceExhausted, "quota")
	if got := OfError(bare); got != Transient {
		t.Errorf("RESOURCE_EXHAUSTED without RetryInfo: %v, want Transient", got)
	}
	st, err := status.New(grpccodes.ResourceExhausted, "quota").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if got := OfError(st.Err()); got != Transient {
		t.Errorf("RESOURCE_EXHAUSTED with RetryInfo: %v, want Transient", got)
	}
	if got := OfError(fmt.Errorf("x: %w", st.Err())); got != Transient {
		t.Errorf("wrapped RESOURCE_EXHAUSTED with RetryInfo: %v, want Transient", got)
	}
	other, _ := status.New(grpccodes.ResourceExhausted, "quota").WithDetails(&errdetails.QuotaFailure{})
	if got := OfError(other.Err()); got != Transient {
		t.Errorf("RESOURCE_EXHAUSTED with QuotaFailure only: %v, want Transient", got)
	}
	for _, msg := range []string{
		"grpc: received message larger than max (5000 vs. 4096)",
		"grpc: received message larger than max length allowed on current machine (1 vs. 2)",
		"trying to send message larger than max (5000 vs. 4096)",
	} {
		if got := OfError(status.Error(grpccodes.ResourceExhausted, msg)); got != Permanent {
			t.Errorf("RESOURCE_EXHAUSTED %q: %v, want Permanent (a size limit of gRPC's, not quota)", msg, got)
		}
	}
}

// TestClientSideFailuresArePermanent: failures grpc-go produces before the
// server could act (TLS verification, marshalling) are not retried; a
// handshake that failed for a network reason still is.
func TestClientSideFailuresArePermanent(t *testing.T) {
	for _, tc := range []struct {
		code grpccodes.Code
		msg  string
		want Class
	}{
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`, Permanent},
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2030-01-01T00:00:00Z is after 2029-01-01T00:00:00Z"`, Permanent},
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate is valid for localhost, not iam.googleapis.com"`, Permanent},
		{grpccodes.Unavailable, `x509: certificate signed by unknown authority`, Permanent}, // gax-go's own test case
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: remote error: tls: bad certificate"`, Permanent},
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: remote error: tls: certificate required"`, Permanent},
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, Permanent},
		{grpccodes.Internal, `grpc: error while marshaling: string field contains invalid UTF-8`, Permanent},
		// Network trouble during a handshake, and the server's own words.
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: EOF"`, Transient},
		{grpccodes.Unavailable, `connection error: desc = "transport: authentication handshake failed: remote error: tls: internal error"`, Transient},
		{grpccodes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, Transient},
		{grpccodes.Unavailable, `The service is currently unavailable.`, Transient},
		{grpccodes.Internal, `Internal error encountered.`, Transient},
		{grpccodes.Internal, `grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data`, Transient},
		{grpccodes.PermissionDenied, `x509: certificate signed by unknown authority`, Permanent},
		{grpccodes.DeadlineExceeded, `x509: anything`, Transient}, // only UNAVAILABLE carries a handshake failure
	} {
		err := status.Error(tc.code, tc.msg)
		if got := OfError(err); got != tc.want {
			t.Errorf("%v %q: OfError = %v, want %v", tc.code, tc.msg, got, tc.want)
		}
		if got := OfError(fmt.Errorf("w: %w", err)); got != tc.want {
			t.Errorf("wrapped %v %q: OfError = %v, want %v", tc.code, tc.msg, got, tc.want)
		}
	}
}

// TestUnknownTransientNoCodePermanent (issue 19 item 8): a status UNKNOWN
// (grpc-go's code for a proxy's bare HTTP 500) is Transient, DATA_LOSS stays
// Permanent, and an error that carries no code stays Permanent: it is never
// read as UNKNOWN to classify it.
func TestUnknownTransientNoCodePermanent(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want Class
	}{
		{"UNKNOWN", status.Error(grpccodes.Unknown, "unexpected HTTP status code received from server: 500 (Internal Server Error)"), Transient},
		{"wrapped UNKNOWN", fmt.Errorf("call: %w", status.Error(grpccodes.Unknown, "x")), Transient},
		{"DATA_LOSS", status.Error(grpccodes.DataLoss, "x"), Permanent},
		{"plain error", errors.New("no code"), Permanent},
		{"wrapped plain error", fmt.Errorf("a: %w", errors.New("no code")), Permanent},
	} {
		if got := OfError(tc.err); got != tc.want {
			t.Errorf("%s: OfError = %v, want %v", tc.name, got, tc.want)
		}
	}
}
