package interceptor

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	gax "github.com/googleapis/gax-go/v2"
)

var gaxOptionsType = reflect.TypeFor[[]gax.CallOption]()

// DisableGAXRetries turns a GAPIC client's own gax retries off, so that one
// layer retries: on a client built by hand (NewClient and NewRESTClient do
// it), call DisableGAXRetries(client.CallOptions). It appends
// gax.WithRetry(nil) to a copy of each method's options. A method's gax
// timeout still caps the call: a context deadline of your own, or
// gax.WithTimeout, lifts it. Anything else is refused, saying what to pass.
func DisableGAXRetries(callOptions any) error {
	typ, n, ok := appendGAX(callOptions, nil, gax.WithRetry(nil))
	switch {
	case !ok:
		return fmt.Errorf("iamretry: DisableGAXRetries(%T): pass a GAPIC client's CallOptions, a non-nil pointer to a struct of []gax.CallOption fields (for example adminClient.CallOptions)", callOptions)
	case n == 0:
		return errors.New("iamretry: DisableGAXRetries(" + typ.String() + "): the struct has no []gax.CallOption field; pass a GAPIC client's CallOptions (for example adminClient.CallOptions)")
	}
	return nil
}

// appendGAX appends extra to every settable []gax.CallOption field of
// callOptions, a non-nil pointer to a struct (a GAPIC client's
// CallOptions), calling seen, when not nil, with each field's name and
// options before. It returns the struct's type and how many fields it
// changed; ok is false, and nothing is changed, when callOptions is not
// such a pointer.
func appendGAX(callOptions any, seen func(name string, opts []gax.CallOption), extra ...gax.CallOption) (typ reflect.Type, n int, ok bool) {
	v := reflect.ValueOf(callOptions)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, 0, false
	}
	s := v.Elem()
	for i := range s.NumField() {
		f := s.Field(i)
		if f.Type() != gaxOptionsType || !f.CanSet() {
			continue
		}
		opts := f.Interface().([]gax.CallOption)
		if seen != nil {
			seen(s.Type().Field(i).Name, opts)
		}
		f.Set(reflect.ValueOf(append(slices.Clip(opts), extra...)))
		n++
	}
	return s.Type(), n, true
}
