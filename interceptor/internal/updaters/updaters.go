// Package updaters holds what the read-modify-write packages built on
// interceptor.Transact (policy, role, deny) share beyond the engine: the
// checks of their constructors and the gRPC status of their errors.
package updaters

import (
	"errors"
	"reflect"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// Built reports whether r was built by interceptor.New: each method of a
// Retrier that was not panics, naming New.
func Built(r *interceptor.Retrier) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	r.Backoff()
	return true
}

// IsNil reports whether v, a client given to a constructor, is nil: the nil
// interface, or a nil pointer, map, slice, func or chan inside it.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// Status is the status of an error that wraps cause under the message msg:
// cause's status (its code and details) with msg as its message, so that
// status.Code(err) is the cause's code also when the cause is a REST error
// (a discovery client's *googleapi.Error, or a GAPIC REST client's
// APIError, whose own status only guesses from the HTTP status): then the
// code is the one its JSON body names (codes.CodeOf).
func Status(cause error, msg string) *status.Status {
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(cause, &se) {
		if ae, ok := se.(*apierror.APIError); !ok || ae.HTTPCode() <= 0 {
			p := se.GRPCStatus().Proto()
			p.Message = msg
			return status.FromProto(p)
		}
	}
	return status.New(codes.CodeOf(cause), msg)
}
