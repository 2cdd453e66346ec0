package codes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Garbage in: codes outside the 17, classes outside the four, errors that
// are nil inside, wrapped many times, or joined.
func TestCodesGarbage(t *testing.T) {
	for _, c := range []grpccodes.Code{17, 100, math.MaxUint32} {
		if Of(c) != Permanent || HTTPStatus(c) != 500 {
			t.Errorf("code %d: class %v, HTTP %d", c, Of(c), HTTPStatus(c))
		}
	}
	if s := Class(200).String(); s != "Class(200)" {
		t.Errorf("Class(200) = %q", s)
	}
	deep := status.Error(grpccodes.Unavailable, "x")
	for range 1000 {
		deep = fmt.Errorf("layer: %w", deep)
	}
	if OfError(deep) != Transient {
		t.Error("deeply wrapped UNAVAILABLE not Transient")
	}
	// A join: the first error the chain walk meets decides.
	if c := OfError(errors.Join(errors.New("plain"), status.Error(grpccodes.Internal, "x"))); c != Transient {
		t.Errorf("joined INTERNAL: %v", c)
	}
	// A caller's context error joined with a server's transient one: the
	// caller's context wins (retrying cannot help).
	if c := OfError(errors.Join(status.Error(grpccodes.Unavailable, "x"), context.Canceled)); c != Permanent {
		t.Errorf("UNAVAILABLE joined with context.Canceled: %v", c)
	}
	// REST errors with odd codes and bodies.
	for _, e := range []*googleapi.Error{
		{Code: 0},
		{Code: -1},
		{Code: 999},
		{Code: 503, Body: `{"error":{"status":"NOT_A_CODE"}}`},
		{Code: 503, Body: `{"error":{"status":null}}`},
		{Code: 503, Body: `{"error":[]}`},
		{Code: 503, Body: `[]`},
		{Code: 200},
	} {
		want := Permanent
		if e.Code == 503 {
			want = Transient
		}
		if c := OfError(e); c != want {
			t.Errorf("%+v: %v, want %v", e, c, want)
		}
	}
	// A gax APIError without an HTTP code or a status is Permanent, never a panic.
	if ae, ok := apierror.FromError(errors.New("plain")); ok {
		if c := OfError(ae); c != Permanent {
			t.Errorf("APIError from a plain error: %v", c)
		}
	}
}
