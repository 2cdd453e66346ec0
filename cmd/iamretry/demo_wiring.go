package main

// The wiring of `iamretry demo`: the clients, Retriers and Updaters each
// step calls through, on the fake and the story's clock, and the wire
// interceptor that models the network and reports the attempts that
// succeed.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// peekPolicy reads resource's policy from the fake to show it, through the
// fake's own connection (no interceptor, no round trip on the story's
// clock), with the admin API for a service account; nil on an error.
func (d *demo) peekPolicy(ctx context.Context, resource string, viaAdmin bool) *iampb.Policy {
	req := &iampb.GetIamPolicyRequest{Resource: resource}
	var p *iampb.Policy
	if viaAdmin {
		p, _ = adminpb.NewIAMClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	} else {
		p, _ = iampb.NewIAMPolicyClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	}
	return p
}

// observer reports every failed attempt with the Retrier's decision.
func (d *demo) observer(who string) func(context.Context, interceptor.Attempt) {
	return func(_ context.Context, a interceptor.Attempt) {
		if a.Reason == interceptor.Succeeded {
			return // the wire reports the attempt that succeeded
		}
		d.ev.emit(failedAttempt(d.currentStep(), d.since(), who, a))
	}
}

// wire is the innermost interceptor: it models the network (each call takes
// the round-trip time on the story's clock) and reports the attempts that
// succeed; the observer reports the ones that fail.
func (d *demo) wire(who string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := d.clk.Sleep(ctx, d.flags.rtt); err != nil {
			return status.FromContextError(err).Err()
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			n := 1
			if md, ok := metadata.FromOutgoingContext(ctx); ok {
				if v := md.Get(interceptor.AttemptMetadataKey); len(v) > 0 {
					if k, perr := strconv.Atoi(v[0]); perr == nil {
						n = k + 1
					}
				}
			}
			d.ev.emit(okAttempt(d.currentStep(), d.since(), who, method, n))
		}
		return err
	}
}

// retrierOptions are the options of every Retrier in the story: the story's
// clock, a seeded random source of its own, and the observer.
func (d *demo) retrierOptions(who string, seed uint64) []interceptor.Option {
	opts := []interceptor.Option{
		interceptor.WithClock(d.clk),
		interceptor.WithRandom(seededRandom(seed)),
		interceptor.WithObserver(d.observer(who)),
	}
	if d.meter != nil {
		opts = append(opts, interceptor.WithMeterProvider(d.meter.mp))
	}
	return opts
}

// clients builds an IAMPolicy client and, withAdmin, an IAM admin client on
// the fake, with a Retrier of their own as a dial option.
func (d *demo) clients(ctx context.Context, who string, seed uint64, withAdmin bool) (*iamapi.IamPolicyClient, *admin.IamClient, error) {
	r, err := interceptor.New(d.retrierOptions(who, seed)...)
	if err != nil {
		return nil, nil, err
	}
	opts := append(d.fake.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), d.wire(who))))
	pc, err := iamapi.NewIamPolicyClient(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	d.closers = append(d.closers, pc.Close)
	// Retry at one layer: GAPIC clients retry some methods themselves
	// through gax, on real timers; over the interceptor every gax attempt
	// would run the interceptor's whole schedule again. DisableGAXRetries
	// leaves the retrying to the interceptor (and the updater) alone.
	if err := interceptor.DisableGAXRetries(pc.CallOptions); err != nil {
		return nil, nil, err
	}
	if !withAdmin {
		return pc, nil, nil
	}
	ac, err := admin.NewIamClient(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	d.closers = append(d.closers, ac.Close)
	if err := interceptor.DisableGAXRetries(ac.CallOptions); err != nil { // retry at one layer, as above
		return nil, nil, err
	}
	return pc, ac, nil
}

// seededRandom is a random source for WithRandom: seeded, so the story is
// the same on every run, and safe for concurrent use.
func seededRandom(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x1a3e7))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}

// updater is a policy.Updater of its own, on a client of its own, for who.
func (d *demo) updater(ctx context.Context, who string, seed uint64, opts ...interceptor.Option) (*policy.Updater, error) {
	pc, _, err := d.clients(ctx, who, d.flags.seed+seed, false)
	if err != nil {
		return nil, err
	}
	return d.newUpdater(pc, append(d.retrierOptions(who, d.flags.seed+seed+1), opts...)...)
}

// newUpdater is a policy.Updater over pc on a Retrier of its own, built from
// opts: the demo gives each writer its own jitter stream, apart from its
// client's interceptor.
func (d *demo) newUpdater(pc policy.Client, opts ...interceptor.Option) (*policy.Updater, error) {
	r, err := interceptor.New(opts...)
	if err != nil {
		return nil, err
	}
	return policy.NewUpdater(pc, r)
}
