package interceptor_test

import (
	"context"
	"fmt"
	"log"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// WaitVisible, after creating a service account, reads it until 3 reads in
// a row succeed: IAM is eventually consistent, and a new account answers
// NOT_FOUND (or, for a while, PERMISSION_DENIED) before every replica knows
// it. Here the fake hides each new account from its first 2 reads. The
// reads go through a client wired to the same Retrier (NewClient):
// WaitVisible owns them, so the interceptor passes their failures through
// and each read reaches the server once.
func ExampleWaitVisible() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	srv.SetPropagationReads(2)

	r, err := interceptor.New(
		interceptor.WithClock(iamtest.NewVirtualClock(time.Now())), // the waits take no real time
		interceptor.WithRandom(func() float64 { return 0 }),        // no jitter, for the printed waits
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			what := status.Code(a.Err).String()
			if a.Reason == interceptor.Confirming {
				what = "good" // a good read short of the 3: no failure
			}
			fmt.Printf("read %d: %s, %s, wait %v\n", a.N, what, a.Reason, a.Wait)
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "my-robot"})
	if err != nil {
		log.Fatal(err)
	}
	got, err := interceptor.WaitVisible(ctx, r, "get my-robot", func(ctx context.Context) (*adminpb.ServiceAccount, error) {
		return client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
	})
	fmt.Println(got.GetEmail(), err)
	// Output:
	// read 1: NotFound, retry, wait 1s
	// read 2: NotFound, retry, wait 2s
	// read 3: good, confirming, wait 1s
	// read 4: good, confirming, wait 1s
	// read 5: OK, succeeded, wait 0s
	// my-robot@my-project.iam.gserviceaccount.com <nil>
}
