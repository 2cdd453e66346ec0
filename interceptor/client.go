package interceptor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/api/option/internaloption"
	gtransport "google.golang.org/api/transport/grpc"
	htransport "google.golang.org/api/transport/http"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// cloudPlatformScope is the scope NewRESTClient asks for when opts name none.
const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// NewClient builds a GAPIC gRPC client wired to r, as in
// interceptor.NewClient(ctx, r, admin.NewIamClient, opts...): it adds r's
// interceptor as a dial option, turns gax's own retries off (the LROClient's
// too), and makes each method's gax timeout its per-attempt timeout unless r
// or the call has one, so that r's deadline governs. Bad input (a nil or
// unbuilt r, a nil option, option.WithGRPCConn, a REST constructor) gets an
// error naming it and no client; newClient's error is returned unchanged.
func NewClient[C any](ctx context.Context, r *Retrier, newClient func(context.Context, ...option.ClientOption) (C, error), opts ...option.ClientOption) (C, error) {
	var zero C
	const fn = "NewClient"
	if err := checkClientArgs(ctx, fn, r, newClient == nil, opts); err != nil {
		return zero, err
	}
	ci := &clientInterceptor{r: r}
	all := append(slices.Clip(opts), option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(ci.intercept)))
	c, err := newClient(ctx, all...)
	if err != nil {
		return zero, err
	}
	v := reflect.ValueOf(&c).Elem()
	if isNilValue(v) {
		return zero, fmt.Errorf("iamretry: %s: the constructor returned a nil %T without an error", fn, c)
	}
	conn, ok := connectionOf(v)
	switch {
	case !ok:
		closeClient(v)
		return zero, fmt.Errorf("iamretry: %s: %T has no Connection method: not a GAPIC gRPC client (for a discovery NewService, use NewRESTClient)", fn, c)
	case !conn:
		closeClient(v)
		return zero, fmt.Errorf("iamretry: %s: %T is a REST client (its Connection() is nil): use NewRESTClient, whose RoundTripper retries REST requests", fn, c)
	}
	timeouts, err := wireGAX(fn, v)
	if err != nil {
		closeClient(v)
		return zero, err
	}
	ci.timeouts.Store(&timeouts)
	return c, nil
}

// NewRESTClient builds a GAPIC REST client or a discovery service (iam/v1's
// NewService, ...) wired to r: r's RoundTripper wraps a copy of the
// option.WithHTTPClient client, else the one transport/http.NewClient builds
// from opts (cloud-platform scope unless named; no automatic mTLS endpoint:
// set option.WithEndpoint); opts also reach the constructor, its option
// validation off. gax's retries are off, its longest timeout bounds each
// attempt; pass gax.WithRetry(nil) to an operation's Poll and Wait (its
// operations client is out of reach; iamretryvet's restlropoll reports a poll
// without it). Bad input (as for NewClient, a client whose Timeout is shorter
// than r's deadline) gets an error naming it and no client.
func NewRESTClient[C any](ctx context.Context, r *Retrier, newClient func(context.Context, ...option.ClientOption) (C, error), opts ...option.ClientOption) (C, error) {
	var zero C
	const fn = "NewRESTClient"
	if err := checkClientArgs(ctx, fn, r, newClient == nil, opts); err != nil {
		return zero, err
	}
	given, err := givenHTTPClient(ctx, opts)
	if err != nil {
		return zero, fmt.Errorf("iamretry: %s: %w", fn, err)
	}
	if given != nil && given.Timeout > 0 && (r.cfg.deadline == 0 || given.Timeout < r.cfg.deadline) {
		dl := "none (WithDeadline(0))"
		if r.cfg.deadline > 0 {
			dl = r.cfg.deadline.String()
		}
		return zero, fmt.Errorf("iamretry: %s: the option.WithHTTPClient client's Timeout (%v) is shorter than the Retrier's retry deadline (%s): it would cut every call's retries short; give a client without a Timeout (bound calls with their context) or one at least as long", fn, given.Timeout, dl)
	}
	if given != nil {
		if _, wired := given.Transport.(*transport); wired {
			return zero, fmt.Errorf("iamretry: %s: the option.WithHTTPClient client's Transport is already a Retrier's RoundTripper: NewRESTClient adds r's, and two would multiply the attempts; give the client without it", fn)
		}
	}
	base := given
	copts := slices.Clip(opts)
	if base == nil {
		hc, _, err := htransport.NewClient(ctx, append([]option.ClientOption{option.WithScopes(cloudPlatformScope)}, opts...)...)
		if err != nil {
			return zero, err
		}
		base = hc
		// The client built from opts applies them all (and validated
		// them); the constructor refuses some of them (a quota project, a
		// request reason, a client certificate) beside option.WithHTTPClient,
		// and with a client given uses none of those.
		copts = append(copts, internaloption.SkipDialSettingsValidation())
	}
	hc := *base // a copy: the caller's client keeps its transport
	rt := r.RoundTripper(base.Transport).(*transport)
	hc.Transport = rt
	c, err := newClient(ctx, append(copts, option.WithHTTPClient(&hc))...)
	if err != nil {
		if grpcConstructor(ctx, newClient) {
			return zero, fmt.Errorf("iamretry: %s: the constructor builds a gRPC client (it refused the HTTP client: %v): use NewClient, which adds the interceptor; NewRESTClient takes a REST constructor (iamapi.NewIamPolicyRESTClient, ...) or a discovery NewService", fn, err)
		}
		return zero, err
	}
	v := reflect.ValueOf(&c).Elem()
	if isNilValue(v) {
		return zero, fmt.Errorf("iamretry: %s: the constructor returned a nil %T without an error", fn, c)
	}
	if conn, ok := connectionOf(v); ok && conn {
		closeClient(v)
		return zero, fmt.Errorf("iamretry: %s: %T is a gRPC client (its Connection() is not nil): use NewClient, which adds the interceptor", fn, c)
	}
	if _, ok := fieldOf(v, "CallOptions"); ok {
		timeouts, err := wireGAX(fn, v)
		if err != nil {
			closeClient(v)
			return zero, err
		}
		if r.cfg.perAttempt == 0 {
			// Set before the client is handed out: no call has run yet.
			for _, d := range timeouts {
				rt.perAttempt = max(rt.perAttempt, d)
			}
		}
	}
	return c, nil
}

// checkClientArgs refuses what NewClient and NewRESTClient cannot use.
func checkClientArgs(ctx context.Context, fn string, r *Retrier, nilCtor bool, opts []option.ClientOption) error {
	var errs []error
	switch {
	case r == nil:
		errs = append(errs, fmt.Errorf("iamretry: %s: the Retrier is nil: build one with interceptor.New", fn))
	case !r.built():
		errs = append(errs, fmt.Errorf("iamretry: %s: %w", fn, errNotBuilt))
	}
	if nilCtor {
		errs = append(errs, fmt.Errorf("iamretry: %s: the constructor is nil: pass one such as admin.NewIamClient", fn))
	}
	nils := false
	for i, o := range opts {
		if o == nil {
			nils = true
			errs = append(errs, fmt.Errorf("iamretry: %s: option %d of %d is nil: leave an unset option out of opts", fn, i+1, len(opts)))
		}
	}
	if !nils {
		if i := connGiven(ctx, opts); i > 0 {
			errs = append(errs, fmt.Errorf("iamretry: %s: option %d of %d is option.WithGRPCConn (or a connection pool): a connection made elsewhere ignores the dial option that adds the interceptor; give the dial options instead (or add r.UnaryClientInterceptor() to that connection and call DisableGAXRetries)", fn, i, len(opts)))
		}
	}
	return errors.Join(errs...)
}

// givenHTTPClient returns the client of the option.WithHTTPClient in opts
// that wins, or nil: google.golang.org/api/transport/http.NewClient returns
// that client as given, and a sentinel put first shows whether opts hold
// one. No client is built, nor any credential read.
func givenHTTPClient(ctx context.Context, opts []option.ClientOption) (*http.Client, error) {
	resolve := func(sentinel *http.Client) (*http.Client, error) {
		all := append([]option.ClientOption{option.WithHTTPClient(sentinel)}, opts...)
		// Validation is the constructor's: beside a client it refuses
		// options that NewRESTClient applies to the client it builds.
		hc, _, err := htransport.NewClient(ctx, append(all, internaloption.SkipDialSettingsValidation())...)
		return hc, err
	}
	a, b := &http.Client{}, &http.Client{}
	hc, err := resolve(a)
	if err != nil || hc == a {
		return nil, err
	}
	if again, err := resolve(b); err != nil || again != hc {
		return nil, err // option.WithHTTPClient(nil) came last: a client was built, none given
	}
	return hc, nil
}

// newProbeConn returns a connection that is never used (it is never asked
// to connect), to learn what options and constructors do with one.
func newProbeConn() (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///iamretry.invalid", grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// connGiven returns the position (from 1) of the option in opts that
// hands the client a connection made elsewhere (option.WithGRPCConn, or a
// connection pool), or 0: google.golang.org/api/transport/grpc.DialPool
// returns that connection as given, and a probe put first shows whether
// opts hold one. Nothing is dialled.
func connGiven(ctx context.Context, opts []option.ClientOption) int {
	probe, err := newProbeConn()
	if err != nil {
		return 0
	}
	defer probe.Close()
	gives := func(opts []option.ClientOption) bool {
		all := append([]option.ClientOption{option.WithGRPCConn(probe)}, opts...)
		pool, err := gtransport.DialPool(ctx, append(all, internaloption.SkipDialSettingsValidation())...)
		return err == nil && pool.Conn() != probe
	}
	if !gives(opts) {
		return 0
	}
	for i := range opts {
		if gives(opts[:i+1]) {
			return i + 1
		}
	}
	return len(opts)
}

// grpcConstructor reports whether newClient builds a gRPC client: given a
// probe connection alone, it builds one whose Connection() is not nil (a
// REST constructor refuses the connection).
func grpcConstructor[C any](ctx context.Context, newClient func(context.Context, ...option.ClientOption) (C, error)) bool {
	probe, err := newProbeConn()
	if err != nil {
		return false
	}
	defer probe.Close()
	c, err := newClient(ctx, option.WithGRPCConn(probe))
	if err != nil {
		return false
	}
	v := reflect.ValueOf(&c).Elem()
	if isNilValue(v) {
		return false
	}
	conn, ok := connectionOf(v)
	closeClient(v)
	return ok && conn
}

// isNilValue reports whether v (the client, of the constructor's type C)
// is nil, or, when C is an interface, holds a nil pointer.
func isNilValue(v reflect.Value) bool {
	v = dynamic(v)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

var grpcConnType = reflect.TypeFor[*grpc.ClientConn]()

// connectionOf calls the client's Connection() *grpc.ClientConn, which
// GAPIC clients have: nil on a REST client. ok is false when there is none.
func connectionOf(v reflect.Value) (nonNil, ok bool) {
	v = dynamic(v)
	m := v.MethodByName("Connection")
	if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0) != grpcConnType {
		return false, false
	}
	return !m.Call(nil)[0].IsNil(), true
}

// dynamic is the value an interface-typed client holds (the client when
// C is an interface such as any), so its own methods are found.
func dynamic(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// closeClient calls the client's Close() error, if it has one.
func closeClient(v reflect.Value) {
	v = dynamic(v)
	m := v.MethodByName("Close")
	if m.IsValid() && m.Type().NumIn() == 0 {
		m.Call(nil)
	}
}

// fieldOf returns the exported field name of the struct v points to.
func fieldOf(v reflect.Value, name string) (reflect.Value, bool) {
	v = dynamic(v)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() || !f.CanInterface() {
		return reflect.Value{}, false
	}
	return f, true
}

// wireGAX turns gax's retries and timeouts off on the client v and on its
// LROClient, and returns each method's gax timeout, by method name (the
// CallOptions field, which is the gRPC method's name).
func wireGAX(fn string, v reflect.Value) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	co, ok := fieldOf(v, "CallOptions")
	if !ok {
		return nil, fmt.Errorf("iamretry: %s: %s has no exported CallOptions field: not a GAPIC client; wire it by hand (the interceptor as a dial option, or the RoundTripper)", fn, v.Type())
	}
	if err := offGAX(co.Interface(), out); err != nil {
		return nil, fmt.Errorf("iamretry: %s: %s.CallOptions: %w", fn, v.Type(), err)
	}
	if lro, ok := fieldOf(v, "LROClient"); ok && !isNilValue(lro) {
		if lco, ok := fieldOf(lro, "CallOptions"); ok && !isNilValue(lco) {
			lout := map[string]time.Duration{}
			if err := offGAX(lco.Interface(), lout); err != nil {
				return nil, fmt.Errorf("iamretry: %s: %s.LROClient.CallOptions: %w", fn, v.Type(), err)
			}
			for k, d := range lout {
				if out[k] == 0 {
					out[k] = d
				}
			}
		}
	}
	return out, nil
}

// offGAX appends gax.WithRetry(nil) and gax.WithTimeout(0) to every method
// of callOptions (a pointer to a struct of []gax.CallOption), recording
// each method's timeout before in timeouts.
func offGAX(callOptions any, timeouts map[string]time.Duration) error {
	seen := func(name string, opts []gax.CallOption) {
		if d := gaxTimeout(opts); d > 0 {
			timeouts[name] = d
		}
	}
	typ, n, ok := appendGAX(callOptions, seen, gax.WithRetry(nil), gax.WithTimeout(0))
	switch {
	case !ok:
		return fmt.Errorf("%T is not a pointer to a struct of []gax.CallOption fields", callOptions)
	case n == 0:
		return fmt.Errorf("%s has no []gax.CallOption field", typ)
	}
	return nil
}

// gaxTimeout is the timeout opts give a call (gax.WithTimeout; the last
// wins), 0 when none: gax.Invoke, given a context without a deadline, hands
// its call one that ends after the timeout. The timeout lies between what
// is left of that deadline inside the call and how far it is from just
// before Invoke; of a few reads, the roundest value within the tightest
// bounds is taken (exact for a whole number of microseconds).
func gaxTimeout(opts []gax.CallOption) time.Duration {
	opts = slices.DeleteFunc(slices.Clone(opts), func(o gax.CallOption) bool { return o == nil })
	lo, hi := time.Duration(0), time.Duration(-1)
	for range 3 {
		start := time.Now()
		_ = gax.Invoke(context.Background(), func(ctx context.Context, _ gax.CallSettings) error {
			if dl, ok := ctx.Deadline(); ok {
				lo = max(lo, time.Until(dl))
				if h := dl.Sub(start); hi < 0 || h < hi {
					hi = h
				}
			}
			return nil
		}, opts...)
		if hi < 0 {
			return 0 // no timeout
		}
	}
	for unit := time.Second; unit >= time.Microsecond; unit /= 10 {
		if d := hi.Truncate(unit); d > 0 && d >= lo {
			return d
		}
	}
	return hi
}

// clientInterceptor is the interceptor NewClient adds: r's, with each
// method's per-attempt timeout (the method's gax timeout) where r has none.
type clientInterceptor struct {
	r *Retrier
	// timeouts by method name (the part after the last '/'); set once the
	// client is built, before any call of the caller's.
	timeouts atomic.Pointer[map[string]time.Duration]
}

func (ci *clientInterceptor) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	r := ci.r
	if r.cfg.perAttempt == 0 {
		if m := ci.timeouts.Load(); m != nil {
			if d := (*m)[method[strings.LastIndexByte(method, '/')+1:]]; d > 0 {
				if r.budget != nil {
					r.budget.deposit()
				}
				return r.interceptSlow(ctx, method, req, reply, cc, invoker, opts, d)
			}
		}
	}
	return r.intercept(ctx, method, req, reply, cc, invoker, opts...)
}
