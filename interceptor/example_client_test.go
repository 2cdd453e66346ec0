package interceptor_test

import (
	"context"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv1 "google.golang.org/api/iam/v1"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// One call wires a GAPIC client: here the admin client, against the fake
// (in a program, drop the fake's options and the clock; the client
// authenticates with Application Default Credentials or your options).
func ExampleNewClient() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(
		interceptor.WithDeadline(2*time.Minute),
		interceptor.WithClock(iamtest.NewVirtualClock(time.Now())),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	sa := srv.SeedServiceAccount("p1", "robot-1")
	srv.FailNext(iamtest.MethodGetServiceAccount, 2, grpccodes.Unavailable)
	got, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println(got.GetEmail(), err, "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))

	// An outage longer than gax's 60 s timeout: r's 2 min deadline governs.
	srv.SetOutage(iamtest.MethodGetServiceAccount, grpccodes.Unavailable)
	srv.ResetCalls()
	_, err = client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	fmt.Println(status.Code(err), "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))
	// Output:
	// robot-1@p1.iam.gserviceaccount.com <nil> server calls: 3
	// Unavailable server calls: 8
}

// A discovery client (google.golang.org/api/iam/v1) wired to the Retrier:
// its RoundTripper wraps a copy of the given HTTP client's transport.
// Without option.WithHTTPClient, NewRESTClient builds the authenticated
// client from the options (cloud-platform scope unless they name one).
func ExampleNewRESTClient() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	svc, err := interceptor.NewRESTClient(ctx, r, iamv1.NewService, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("p1", "robot-1")
	srv.FailNext(iamtest.MethodGetServiceAccount, 2, grpccodes.Unavailable)
	got, err := svc.Projects.ServiceAccounts.Get(sa.GetName()).Context(ctx).Do()
	fmt.Println(got.Email, err, "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))
	// Output:
	// robot-1@p1.iam.gserviceaccount.com <nil> server calls: 3
}

// DeadlineContext gives one call its own retry deadline, on every face: a
// CI step's call can keep retrying for the guidance's 300 s while the
// Retrier's default stays 60 s. Here a step of one's own, through Do.
func ExampleDeadlineContext() {
	r, err := interceptor.New(
		interceptor.WithClock(iamtest.NewVirtualClock(time.Now())),
		interceptor.WithRandom(func() float64 { return 0.5 }),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	down := func(context.Context) error { return status.Error(grpccodes.Unavailable, "down") }
	for _, d := range []time.Duration{10 * time.Second, 300 * time.Second} {
		n := 0
		_ = r.Do(interceptor.DeadlineContext(context.Background(), d), "step", func(ctx context.Context) error {
			n++
			return down(ctx)
		})
		fmt.Printf("deadline %v: %d attempts\n", d, n)
	}
	// Output:
	// deadline 10s: 4 attempts
	// deadline 5m0s: 14 attempts
}

// MaxAttemptsContext caps one call's attempts, on every face; a gRPC
// CallMaxAttempts option, when given too, wins.
func ExampleMaxAttemptsContext() {
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		fmt.Println(err)
		return
	}
	n := 0
	err = r.Do(interceptor.MaxAttemptsContext(context.Background(), 2), "step", func(context.Context) error {
		n++
		return status.Error(grpccodes.Unavailable, "down")
	})
	fmt.Println(n, "attempts:", status.Code(err))
	// Output:
	// 2 attempts: Unavailable
}
