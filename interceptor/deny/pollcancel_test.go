package deny_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCancelledDuringPoll: the caller cancels while a poll of the
// operation (GetOperation) is on its way: the Update ends with the
// context's code, errors.Is finds context.Canceled, and nothing more is
// sent (no wait, no rerun, no second write), over gRPC and REST alike.
func TestCancelledDuringPoll(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			clock := iamtest.NewVirtualClock(time.Now())
			srv := iamtest.NewServer(t, iamtest.WithClock(clock))
			r, err := interceptor.New(interceptor.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var polls atomic.Int32
			var c *iamv2.PoliciesClient
			switch tr {
			case "grpc":
				onPoll := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, inv grpc.UnaryInvoker, opts ...grpc.CallOption) error {
					if strings.HasSuffix(method, "/GetOperation") {
						polls.Add(1)
						cancel()
					}
					return inv(ctx, method, req, reply, cc, opts...)
				}
				c, err = iamv2.NewPoliciesClient(context.Background(), append(srv.ClientOptions(),
					option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), onPoll)))...)
			case "rest":
				base := srv.HTTPClient().Transport
				onPoll := rtFunc(func(req *http.Request) (*http.Response, error) {
					if strings.Contains(req.URL.Path, "/operations/") {
						polls.Add(1)
						cancel()
					}
					return base.RoundTrip(req)
				})
				c, err = iamv2.NewPoliciesRESTClient(context.Background(), append(srv.RESTClientOptions(),
					option.WithHTTPClient(&http.Client{Transport: r.RoundTripper(onPoll)}))...)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
				t.Fatal(err)
			}
			u, err := deny.NewUpdater(c, r)
			if err != nil {
				t.Fatal(err)
			}
			e := &env{srv: srv}
			e.seed(rule(0))
			srv.SetDenyOperationDelay(time.Minute)
			srv.ResetCalls()
			_, err = u.Update(ctx, policyName, deny.AddRule(rule(1)))
			if status.Code(err) != grpccodes.Canceled || !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v (status.Code %v), want CANCELED wrapping context.Canceled", err, status.Code(err))
			}
			if polls.Load() != 1 || srv.CountCalls(iamtest.MethodUpdatePolicy) != 1 || srv.CountCalls(iamtest.MethodGetPolicy) != 1 {
				t.Fatalf("%d polls, %d writes, %d reads; want 1 of each", polls.Load(), srv.CountCalls(iamtest.MethodUpdatePolicy), srv.CountCalls(iamtest.MethodGetPolicy))
			}
			if w := clock.Sleeps(); len(w) != 0 {
				t.Fatalf("waits %v after the cancel", w)
			}
		})
	}
}
