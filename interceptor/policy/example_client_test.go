package policy_test

import (
	"context"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// FromAdmin adapts the IAM admin client, whose GetIamPolicy and
// SetIamPolicy are hand-written with other types, for a service account's
// own policy. The write's answer is lost once (it committed): the rerun finds
// the grant made and writes nothing; a second Update changes nothing and
// writes nothing either.
func ExampleFromAdmin() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/my-project", AccountId: "deployer"})
	if err != nil {
		fmt.Println(err)
		return
	}

	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromAdmin(client), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.LoseNextAnswers(iamtest.MethodAdminSetIamPolicy, 1)
	for range 2 {
		p, err := u.Update(ctx, sa.Name, policy.AddBinding("roles/iam.serviceAccountUser", "user:Alice@Example.com"))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, b := range p.Bindings {
			fmt.Println(b.Role, b.Members)
		}
	}
	fmt.Println("writes:", srv.CountCalls(iamtest.MethodAdminSetIamPolicy))
	// Output:
	// roles/iam.serviceAccountUser [user:alice@example.com]
	// roles/iam.serviceAccountUser [user:alice@example.com]
	// writes: 1
}

// FromConn adapts a raw gRPC connection to the google.iam.v1.IAMPolicy
// service, for programs that hold a *grpc.ClientConn rather than a GAPIC
// client.
func ExampleFromConn() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromConn(srv.Conn()), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("my-project", "orders-app") // IAM grants only to accounts that exist
	p, err := u.Update(ctx, "projects/my-project/topics/orders", policy.AddBinding("roles/pubsub.publisher", "serviceAccount:"+sa.GetEmail()))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Bindings[0].Role, p.Bindings[0].Members)
	// Output:
	// roles/pubsub.publisher [serviceAccount:orders-app@my-project.iam.gserviceaccount.com]
}

// NewUpdater runs on a Retrier: one Retrier serves the interceptor and the
// Updater, so they share one budget, clock, deadline and set of observers.
// What only the Updater has is a policy.Option; a missing Retrier is
// refused by name.
func ExampleNewUpdater() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	if _, err := policy.NewUpdater(policy.FromConn(srv.Conn()), nil); err != nil {
		fmt.Println(err)
	}

	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}), interceptor.WithDeadline(2*time.Minute),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s attempt %d: %v, %s\n", a.Method, a.N, a.Class, a.Reason)
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromConn(srv.Conn()), r, policy.WithConflictBackoff(interceptor.DocumentedConflicts))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 1)
	if _, err := u.Update(ctx, "projects/my-project", policy.AddBinding("roles/viewer", "user:alice@example.com")); err != nil {
		fmt.Println(err)
		return
	}
	// Output:
	// iamretry/policy: NewUpdater needs the *interceptor.Retrier it runs on; got nil (build one with interceptor.New)
	// iamretry.policy/Update attempt 1: Conflict, retry
	// iamretry.policy/Update attempt 2: Permanent, succeeded
}

// Update applies its mutations in one read-modify-write. A Mutation that
// fails stops the Update before anything is written, with its error.
func ExampleUpdater_Update() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromConn(srv.Conn()), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := u.Update(ctx, "projects/my-project",
		policy.AddBinding("roles/viewer", "user:alice@example.com"),
		policy.AddBinding("roles/viewer", "group:ops@example.com"),
		policy.AddBinding("roles/editor", "user:bob@example.com"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, b := range p.Bindings {
		fmt.Println(b.Role, b.Members)
	}
	// A malformed member (no "user:"): nothing is written, the error says why.
	_, err = u.Update(ctx, "projects/my-project", policy.AddBinding("roles/viewer", "alice@example.com"))
	fmt.Println(status.Code(err), "writes:", srv.CountCalls(iamtest.MethodSetIamPolicy))
	// Output:
	// roles/viewer [user:alice@example.com group:ops@example.com]
	// roles/editor [user:bob@example.com]
	// InvalidArgument writes: 1
}

// WithConflictBackoff chooses the schedule of the reruns after a concurrent
// change: DocumentedConflicts reruns on the Retrier's backoff (1.5 s here,
// with a jitter draw of 0.5), as a transient failure is retried.
func ExampleWithConflictBackoff() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}), interceptor.WithRandom(func() float64 { return 0.5 }),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			if a.Retrying {
				fmt.Printf("attempt %d: %v, wait %v\n", a.N, a.Class, a.Wait)
			}
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromConn(srv.Conn()), r, policy.WithConflictBackoff(interceptor.DocumentedConflicts))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 1)
	if _, err := u.Update(ctx, "projects/my-project", policy.AddBinding("roles/viewer", "user:alice@example.com")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("writes:", srv.CountCalls(iamtest.MethodSetIamPolicy))
	// Output:
	// attempt 1: Conflict, wait 1.5s
	// writes: 2
}
