package codes

import (
	"context"
	"errors"
	"fmt"
	"testing"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestOfTable(t *testing.T) {
	want := map[grpccodes.Code]Class{
		grpccodes.Unavailable:      Transient,
		grpccodes.Internal:         Transient,
		grpccodes.DeadlineExceeded: Transient,
		grpccodes.NotFound:         Propagation,
		grpccodes.Aborted:          Conflict,
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
