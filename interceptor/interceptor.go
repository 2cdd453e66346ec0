package interceptor

import (
	"context"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// AttemptMetadataKey ("x-retry-attempt", go-grpc-middleware's) numbers a
// retry in its outgoing metadata (REST: a header): "1" on the second attempt.
const AttemptMetadataKey = retry.AttemptMetadataKey

// UnaryClientInterceptor returns r as a gRPC unary client interceptor, for a
// client built by hand (with DisableGAXRetries): pass it in
// option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(...)). A call that
// succeeds at once costs one pass over its call options, no allocation and no
// clock read; the invoker is called at most once per attempt.
func (r *Retrier) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	r.mustBeBuilt("Retrier.UnaryClientInterceptor")
	return r.intercept
}

// UnaryClientInterceptor builds a Retrier from opts and returns its
// interceptor; it panics with New's error on an invalid option.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	r, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return r.UnaryClientInterceptor()
}

func (r *Retrier) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if r.budget != nil {
		r.budget.deposit()
	}
	if r.slow || hasEarlyOption(opts) {
		return r.interceptSlow(ctx, method, req, reply, cc, invoker, opts, 0)
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil {
		if m := r.m; m != nil {
			// metrics.succeeded, its cache hit inlined here.
			if s := m.cached(method); s != nil {
				s.ok.Add(1)
			} else {
				m.succeeded(method)
			}
		}
		return nil
	}
	g := &grpcCall{r: r, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts}
	return g.retry(ctx, err)
}

// interceptSlow is intercept for a call whose first attempt needs its
// per-call options (an invalid one, or a CallPerAttemptTimeout other than
// 0), or a Retrier with a per-attempt timeout or pushback (which cost
// allocations on every call: a context and timer per attempt, or a
// trailer). The other per-call options are read only once an attempt
// failed (grpcCall.retry).
//
// def is the method's per-attempt timeout where the Retrier has none (a
// client built by NewClient: the method's gax timeout); 0: none.
func (r *Retrier) interceptSlow(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption, def time.Duration) error {
	set := readCallOptions(opts)
	if set.invalid != nil {
		if r.m != nil {
			r.m.ended(ctx, method, set.invalid, 0, 0, NotRetryable)
		}
		return set.invalid
	}
	perAttempt := r.cfg.perAttempt
	if perAttempt == 0 {
		perAttempt = def
	}
	if set.hasPerAttempt {
		perAttempt = set.perAttempt
	}
	if perAttempt == 0 && !r.cfg.pushback {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			if r.m != nil {
				r.m.succeeded(method)
			}
			return nil
		}
		g := &grpcCall{r: r, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts}
		return g.retry(ctx, err)
	}
	if !r.cfg.pushback {
		// The first attempt runs before the call's state is built, so that
		// a call that succeeds at once allocates only its attempt's
		// context (as gax's own timeout would).
		cut, err := firstAttempt(ctx, method, req, reply, cc, invoker, opts, perAttempt)
		if err == nil {
			if r.m != nil {
				r.m.succeeded(method)
			}
			return nil
		}
		g := &grpcCall{r: r, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts, perAttempt: perAttempt, cut: cut}
		return g.retry(ctx, err)
	}
	// WithPushback: every attempt reads its trailer.
	g := &grpcCall{r: r, method: method, req: req, reply: reply, cc: cc, invoker: invoker, opts: opts, perAttempt: perAttempt}
	g.trailer = new(metadata.MD)
	g.opts = append(opts[:len(opts):len(opts)], grpc.Trailer(g.trailer))
	return g.first(ctx)
}

// grpcCall is one gRPC call on the failure path (or with a per-attempt
// timeout or pushback, which cost allocations on every call anyway): the
// gRPC face of the engine. It carries what an attempt needs, so the engine
// sees one small value.
type grpcCall struct {
	r       *Retrier
	method  string
	req     any
	reply   any
	cc      *grpc.ClientConn
	invoker grpc.UnaryInvoker
	opts    []grpc.CallOption // with grpc.Trailer(trailer) when trailer is set
	trailer *metadata.MD      // WithPushback: each attempt's trailer
	// perAttempt is the call's per-attempt timeout (the Retrier's, or
	// CallPerAttemptTimeout's); 0: none.
	perAttempt time.Duration
	// cut tells whether the last attempt ran out of the per-attempt timeout
	// while the caller's context lived.
	cut bool
}

// first runs the first attempt and, if it fails, the retries.
func (g *grpcCall) first(ctx context.Context) error {
	err := g.attempt(ctx, g.perAttempt)
	if err == nil {
		if g.r.m != nil {
			g.r.m.succeeded(g.method)
		}
		return nil
	}
	return g.retry(ctx, err)
}

// retry is the failure path, kept out of intercept so that the success path
// stays small. A call whose context is marked by an owner above (Do, the
// policy Updater) is that owner's to retry: its failure passes through
// untouched. The mark is read only here, after a failure.
func (g *grpcCall) retry(ctx context.Context, err error) error {
	if owned(ctx) {
		if g.r.m != nil {
			g.r.m.ended(ctx, g.method, err, 0, 0, NotRetryable)
		}
		return err
	}
	c := &g.r.cfg
	// The call's per-call options, read only now that it failed (invalid
	// ones never get here: interceptSlow refused them before sending).
	set := readCallOptions(g.opts)
	j := &job{
		method:        g.method,
		face:          g,
		disabled:      set.disabled,
		retryNotFound: set.notFound,
		deadline:      c.deadline,
		maxAttempts:   c.maxAttempts,
		perAttempt:    g.perAttempt,
		again:         g.again,
	}
	if set.hasDeadline {
		j.deadline, j.pinDeadline = set.deadline, true
	}
	if set.hasMaxAttempts {
		j.maxAttempts, j.pinMaxAttempts = set.maxAttempts, true
	}
	if g.perAttempt > 0 {
		j.cut = g.wasCut
	}
	return g.r.run(ctx, j, err)
}

func (g *grpcCall) wasCut() bool { return g.cut }

// message is the call's request message.
func (g *grpcCall) message() any { return g.req }

// serverWait reads the last attempt's A6 trailer (WithPushback).
func (g *grpcCall) serverWait() (time.Duration, pushbackState) {
	if g.trailer == nil {
		return 0, pushbackNone
	}
	return trailerPushback(*g.trailer)
}

// safe asks the safe-to-retry function whether the call may be sent again.
func (g *grpcCall) safe() bool { return g.r.cfg.safe(g.method, g.req) }

// again runs attempt n (n >= 2) under the timeout d the engine gives it.
func (g *grpcCall) again(ctx context.Context, n int, d time.Duration) error {
	if g.trailer != nil {
		*g.trailer = nil
	}
	return g.attempt(withAttempt(ctx, n), d)
}

// attempt invokes the call once, under a timeout of d when d > 0.
func (g *grpcCall) attempt(ctx context.Context, d time.Duration) error {
	g.cut = false
	if d <= 0 {
		return g.invoker(ctx, g.method, g.req, g.reply, g.cc, g.opts...)
	}
	actx, cancel, own := attemptDeadline(ctx, d)
	defer cancel()
	err := g.invoker(actx, g.method, g.req, g.reply, g.cc, g.opts...)
	g.cut = own.ranOut(ctx, err)
	return err
}

// firstAttempt runs a call's first attempt under its per-attempt timeout
// d (> 0), as grpcCall.attempt does, and says whether it was cut.
func firstAttempt(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption, d time.Duration) (cut bool, err error) {
	actx, cancel, own := attemptDeadline(ctx, d)
	defer cancel()
	err = invoker(actx, method, req, reply, cc, opts...)
	return err != nil && own.ranOut(ctx, err), err
}

// withAttempt returns ctx with the attempt's number in its outgoing metadata
// (retry number n-1, as go-grpc-middleware numbers them). The caller's
// metadata is copied, never changed.
func withAttempt(ctx context.Context, n int) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx)
	if ok {
		md = md.Copy()
	} else {
		md = metadata.MD{}
	}
	md.Set(AttemptMetadataKey, strconv.Itoa(n-1))
	return metadata.NewOutgoingContext(ctx, md)
}
