package iamtest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// A minute of UNAVAILABLE, ridden out by an interceptor-equipped client in
// no real time: the interceptor's backoff and the fake's latency both run on
// one VirtualClock. A second thread of the clock ends the outage at 1m0s;
// the client's sixth wait, due at 1m5.5s, wakes after it.
func ExampleVirtualClock() {
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := iamtest.NewVirtualClock(start)
	srv, err := iamtest.New(iamtest.WithClock(clock))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	r, err := interceptor.New(
		interceptor.WithClock(clock),
		interceptor.WithDeadline(2*time.Minute),
		interceptor.WithRandom(func() float64 { return 0.5 }), // jitter of 0.5 s, for a fixed output
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				fmt.Printf("%v: attempt %d: %v, next in %v\n", clock.Since(start), a.N, a.Class, a.Wait)
			}
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	client, err := iamapi.NewIamPolicyClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if err := interceptor.DisableGAXRetries(client.CallOptions); err != nil {
		log.Fatal(err)
	}

	srv.SetLatency(iamtest.MethodGetIamPolicy, 100*time.Millisecond)
	srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	clock.Go(ctx, 2, func(ctx context.Context, i int) {
		switch i {
		case 0: // the code under test
			_, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project"})
			fmt.Printf("%v: GetIamPolicy: %v\n", clock.Since(start), err)
		case 1: // the outage
			if err := clock.Sleep(ctx, time.Minute); err != nil {
				log.Fatal(err)
			}
			srv.ClearOutage(iamtest.MethodGetIamPolicy)
			fmt.Printf("%v: outage over\n", clock.Since(start))
		}
	})
	fmt.Println("waits:", clock.Sleeps())
	// Output:
	// 0s: attempt 1: Transient, next in 1.5s
	// 1.5s: attempt 2: Transient, next in 2.5s
	// 4s: attempt 3: Transient, next in 4.5s
	// 8.5s: attempt 4: Transient, next in 8.5s
	// 17s: attempt 5: Transient, next in 16.5s
	// 33.5s: attempt 6: Transient, next in 32s
	// 1m0s: outage over
	// 1m5.6s: GetIamPolicy: <nil>
	// waits: [1.5s 2.5s 4.5s 8.5s 16.5s 1m0s 32s 100ms]
}
