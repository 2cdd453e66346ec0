package policy_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	iamapi "cloud.google.com/go/iam/apiv1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// exampleClock is a clock whose Sleep moves its time ahead at once, so the
// Examples do not wait out their backoff. Copy it into a test of your own.
type exampleClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *exampleClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *exampleClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	return nil
}

// Grant a role on a resource through the client the rest of the program
// uses, interceptor and all: the Updater owns the retries of its calls (the
// interceptor passes them through, and gax retries stay off). Another writer
// changes the policy between the Updater's read and write, the write is
// refused ABORTED, and the Updater reruns the whole read-modify-write. (The
// fake of iamtest stands in for IAM; a real program drops ClientOptions.)
func Example() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	clk := &exampleClock{}
	r, err := interceptor.New(interceptor.WithClock(clk),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s %s attempt %d: %v, %s\n", a.Method, a.Resource, a.N, a.Class, a.Reason)
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	client, err := iamapi.NewIamPolicyClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	u, err := policy.NewUpdater(client, r)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, 1)
	p, err := u.Update(ctx, "projects/my-project/topics/orders", policy.AddBinding("roles/pubsub.viewer", "user:alice@example.com"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Bindings[0].Role, p.Bindings[0].Members)
	fmt.Println("reads:", srv.CountCalls(iamtest.MethodGetIamPolicy), "writes:", srv.CountCalls(iamtest.MethodSetIamPolicy))
	// Output:
	// iamretry.policy/Update projects/my-project/topics/orders attempt 1: Conflict, retry
	// iamretry.policy/Update projects/my-project/topics/orders attempt 2: Permanent, succeeded
	// roles/pubsub.viewer [user:alice@example.com]
	// reads: 2 writes: 2
}
