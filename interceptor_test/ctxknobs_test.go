package interceptor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// e2eKnobs are the context forms and the server calls each allows during
// an outage of code, on a Retrier with a 2 min deadline (8 attempts).
var e2eKnobs = []struct {
	name  string
	ctx   func(context.Context) context.Context
	code  codes.Code
	calls int
}{
	{"none", func(c context.Context) context.Context { return c }, codes.Unavailable, oneSchedule},
	{"DisableContext", interceptor.DisableContext, codes.Unavailable, 1},
	{"RetryNotFoundContext", interceptor.RetryNotFoundContext, codes.NotFound, oneSchedule},
	{"no RetryNotFoundContext", func(c context.Context) context.Context { return c }, codes.NotFound, 1},
	{"DeadlineContext(10s)", func(c context.Context) context.Context { return interceptor.DeadlineContext(c, 10*time.Second) }, codes.Unavailable, 4},
	{"MaxAttemptsContext(3)", func(c context.Context) context.Context { return interceptor.MaxAttemptsContext(c, 3) }, codes.Unavailable, 3},
}

// TestContextFormsEveryClient: the context forms work the same through every
// gRPC and REST client NewClient and NewRESTClient build (a gRPC CallOption
// on a REST client would be ignored; the context form is not).
func TestContextFormsEveryClient(t *testing.T) {
	t.Parallel()
	type client struct {
		name  string
		build func(ctx context.Context, g *rig) (func(context.Context) error, func(), error)
	}
	var clients []client
	for _, c := range grpcCases() {
		clients = append(clients, client{"gRPC " + c.name, func(ctx context.Context, g *rig) (func(context.Context) error, func(), error) {
			read, _, closeFn, err := c.build(ctx, g)
			return read, func() { _ = closeFn() }, err
		}})
	}
	for _, c := range restCases() {
		clients = append(clients, client{"REST " + c.name, func(ctx context.Context, g *rig) (func(context.Context) error, func(), error) {
			read, _, err := c.build(ctx, g, g.fake.RESTClientOptions())
			return read, func() {}, err
		}})
	}
	for _, cl := range clients {
		for _, k := range e2eKnobs {
			t.Run(fmt.Sprintf("%s/%s", cl.name, k.name), func(t *testing.T) {
				g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
				ctx := context.Background()
				read, closeFn, err := cl.build(ctx, g)
				if err != nil {
					t.Fatal(err)
				}
				defer closeFn()
				g.fake.SetOutage(iamtest.AnyMethod, k.code)
				if err := read(k.ctx(ctx)); err == nil {
					t.Fatal("read succeeded during an outage")
				}
				if n := g.fake.CountCalls(iamtest.AnyMethod); n != k.calls {
					t.Fatalf("%d server calls, want %d", n, k.calls)
				}
			})
		}
	}
}
