// Package updaters holds what the read-modify-write packages built on
// interceptor.Transact (policy, role, deny) share beyond the engine: the
// checks of their constructors and the gRPC status of their errors.
package updaters

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
)

// NotBuilt returns the error interceptor gives a Retrier not built by
// interceptor.New (each of its methods panics with it), or nil.
func NotBuilt(r *interceptor.Retrier) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
			if e, ok := p.(error); ok && errors.Unwrap(e) != nil {
				err = errors.Unwrap(e) // the message, without the method that panicked
			}
		}
	}()
	r.Backoff()
	return nil
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

// EndedBy returns ctx's error when ctx has ended and err reports it by its
// code alone (gRPC's status errors do not wrap the context's error; a REST
// client's do), else nil. An error wrapping err keeps it and matches it
// (errors.Is), so that errors.Is finds the context's error either way.
func EndedBy(ctx context.Context, err error) error {
	if ce := ctx.Err(); ce != nil && !errors.Is(err, ce) && codes.CodeOf(err) == status.FromContextError(ce).Code() {
		return ce
	}
	return nil
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

// Check applies opts to cfg and checks what a NewUpdater is given: the
// client c (clientHint says what to pass) and the Retrier r. It returns nil,
// or an error naming each refusal (errs is cfg's list, which the options
// append to), each prefixed with pkg ("iamretry/policy").
func Check[C any, O ~func(*C)](pkg string, c any, clientHint string, r *interceptor.Retrier, cfg *C, errs *[]error, opts []O) error {
	if IsNil(c) {
		*errs = append(*errs, errors.New("NewUpdater needs a Client ("+clientHint+"); got nil"))
	}
	if r == nil {
		*errs = append(*errs, errors.New("NewUpdater needs the *interceptor.Retrier it runs on; got nil (build one with interceptor.New)"))
	} else if err := NotBuilt(r); err != nil {
		*errs = append(*errs, fmt.Errorf("NewUpdater: %w", err))
	}
	for i, o := range opts {
		if o == nil {
			*errs = append(*errs, fmt.Errorf("NewUpdater: option %d of %d is nil", i+1, len(opts)))
			continue
		}
		o(cfg)
	}
	if len(*errs) == 0 {
		return nil
	}
	for i, e := range *errs {
		(*errs)[i] = fmt.Errorf("%s: %w", pkg, e)
	}
	return errors.Join(*errs...)
}

// SetConflicts is WithConflictBackoff(s): it sets *dst to s, or appends
// to errs an error naming s when s is not a known schedule.
func SetConflicts(s interceptor.ConflictBackoff, dst *interceptor.ConflictBackoff, errs *[]error) {
	if s != interceptor.ScaledConflicts && s != interceptor.SpreadConflicts && s != interceptor.DocumentedConflicts {
		*errs = append(*errs, fmt.Errorf("WithConflictBackoff(%v): unknown schedule; use interceptor.ScaledConflicts, interceptor.SpreadConflicts or interceptor.DocumentedConflicts", s))
		return
	}
	*dst = s
}
