package interceptor

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	gax "github.com/googleapis/gax-go/v2"
)

var gaxOptionsType = reflect.TypeFor[[]gax.CallOption]()

// DisableGAXRetries turns off the retries that a cloud.google.com/go (GAPIC)
// client makes on its own through gax, so that the interceptor is the only
// layer that retries. NewClient and NewRESTClient do this for you (and
// turn gax's timeouts into per-attempt timeouts); use DisableGAXRetries on
// a client built by hand. Forgotten, it is reported (the package doc's
// "Retry at one layer"). Retries stacked on retries multiply: the IAM admin
// client retries seven methods on UNAVAILABLE and DEADLINE_EXCEEDED (below),
// and each of its attempts would run the interceptor's whole schedule.
//
// callOptions is a client's CallOptions field, a pointer to a struct with
// one []gax.CallOption per method, of a gRPC client or of one built with
// NewRESTClient (NewIamPolicyRESTClient, NewProjectsRESTClient, ...); for a
// REST client the layer that retries is then the Retrier's RoundTripper in
// the client's *http.Client (option.WithHTTPClient):
//
//	client, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
//	...
//	if err := interceptor.DisableGAXRetries(client.CallOptions); err != nil { ... }
//
// It appends gax.WithRetry(nil) to every method's options (the last retry
// setting wins in gax), keeping their timeouts and everything else, and
// copies each slice before it appends, so no other client's options change.
//
// The IAM admin client (v1.15.1) retries seven methods on its own:
// List/Get/Update/DeleteServiceAccount and List/Get/DeleteServiceAccountKey.
// The timeouts it keeps are context deadlines (60 s, on 15 of the admin
// client's 31 methods), and a context deadline wins over the Retrier's own:
// to retry longer than that, give the call a context with its own deadline
// (gax then ignores its timeout) or append gax.WithTimeout to the method's
// options.
//
// REST clients: a GAPIC client built with NewRESTClient has CallOptions of
// the same types as its gRPC twin, so DisableGAXRetries cannot tell them
// apart and turns its retries off too. The interceptor never sees a REST
// call, so on a REST client this must go with the REST transport that
// retries in gax's place (its own piece of work), never alone: alone it
// leaves nothing that retries.
// Anything that is not a non-nil pointer to such a struct is refused with an
// error that says what to pass.
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
