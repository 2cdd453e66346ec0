package interceptor

import (
	"context"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// AttemptMetadataKey is the outgoing metadata key that carries a retry's
// number: go-grpc-middleware's retry.AttemptMetadataKey ("x-retry-attempt"),
// so servers already instrumented for it see ours too. As there, the first
// attempt carries none, the second (the first retry) carries "1", and so on.
const AttemptMetadataKey = retry.AttemptMetadataKey

// UnaryClientInterceptor returns the Retrier as a gRPC unary client
// interceptor. Add it to any cloud.google.com/go client with
//
//	option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor()))
//
// A call that succeeds at once costs one pass over its call options and
// nothing else: no allocation, no clock read. A failed call is retried as
// the package documents; the error returned is the server's last one,
// unchanged, so status.Code(err) is what the last attempt got. The invoker is
// called at most once per attempt.
func (r *Retrier) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return r.intercept
}

// UnaryClientInterceptor builds a Retrier from opts and returns its
// interceptor. It panics with New's error when an option is invalid: use New
// where the options come from configuration.
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	r, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return r.UnaryClientInterceptor()
}

func (r *Retrier) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	var disabled, notFound bool
	for _, o := range opts {
		switch o.(type) {
		case *disableOption:
			disabled = true
		case *notFoundOption:
			notFound = true
		}
	}
	if r.budget != nil {
		r.budget.deposit()
	}
	if r.cfg.pushback {
		return r.interceptWithTrailer(ctx, method, req, reply, cc, invoker, opts, disabled, notFound)
	}
	var err error
	if r.cfg.perAttempt > 0 {
		err = r.invokeWithTimeout(ctx, r.cfg.perAttempt, method, req, reply, cc, invoker, opts)
	} else {
		err = invoker(ctx, method, req, reply, cc, opts...)
	}
	if err == nil {
		return nil
	}
	return r.retryCall(ctx, method, req, reply, cc, invoker, opts, err, disabled, notFound, nil)
}

// interceptWithTrailer is intercept for WithPushback: every attempt reads
// its trailer, which costs allocations even when the call succeeds.
func (r *Retrier) interceptWithTrailer(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption, disabled, notFound bool) error {
	trailer := new(metadata.MD)
	withTrailer := append(opts[:len(opts):len(opts)], grpc.Trailer(trailer))
	var err error
	if r.cfg.perAttempt > 0 {
		err = r.invokeWithTimeout(ctx, r.cfg.perAttempt, method, req, reply, cc, invoker, withTrailer)
	} else {
		err = invoker(ctx, method, req, reply, cc, withTrailer...)
	}
	if err == nil {
		return nil
	}
	return r.retryCall(ctx, method, req, reply, cc, invoker, opts, err, disabled, notFound, trailer)
}

// retryCall is the failure path, kept out of intercept so that the success
// path stays small. trailer, when not nil, receives each attempt's trailer.
func (r *Retrier) retryCall(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption, err error, disabled, notFound bool, trailer *metadata.MD) error {
	var deadlineEnd time.Time // when the retry deadline ends, for per-attempt timeouts
	if r.cfg.deadline > 0 && r.cfg.perAttempt > 0 {
		deadlineEnd = r.cfg.clock.Now().Add(r.cfg.deadline)
	}
	if trailer != nil {
		opts = append(opts[:len(opts):len(opts)], grpc.Trailer(trailer))
	}
	t := &task{
		method:        method,
		req:           req,
		checkSafe:     true,
		disabled:      disabled,
		retryNotFound: notFound,
		trailer:       trailer,
		again: func(ctx context.Context, n int) error {
			if trailer != nil {
				*trailer = nil
			}
			ctx = withAttempt(ctx, n)
			if r.cfg.perAttempt > 0 {
				d := r.cfg.perAttempt
				if !deadlineEnd.IsZero() {
					d = min(d, deadlineEnd.Sub(r.cfg.clock.Now()))
				}
				return r.invokeWithTimeout(ctx, d, method, req, reply, cc, invoker, opts)
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		},
	}
	return r.run(ctx, t, err)
}

func (r *Retrier) invokeWithTimeout(ctx context.Context, d time.Duration, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts []grpc.CallOption) error {
	actx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return invoker(actx, method, req, reply, cc, opts...)
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
