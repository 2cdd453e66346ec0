package policy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// newAccountEnv is the rig on a fake whose new service accounts stay
// invisible for 10 s of clk's time, and an account just created.
func newAccountEnv(t *testing.T) (*iamtest.Server, policy.Client, *vclock.Clock, string) {
	t.Helper()
	clk := vclock.New()
	e := newEnv(t, iamtest.WithClock(clk))
	e.srv.SetPropagationDelay(10 * time.Second)
	sa, err := adminpb.NewIAMClient(e.conn).CreateServiceAccount(context.Background(),
		&adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "new-robot"})
	if err != nil {
		t.Fatal(err)
	}
	return e.srv, e.client, clk, "serviceAccount:" + sa.GetEmail()
}

// TestGrantToNewAccount: a grant to an account created a moment ago is
// refused INVALID_ARGUMENT "does not exist" until IAM sees it; with
// WithRetryNotFound the Updater waits for it within its deadline, without
// it returns the server's error at once, naming the option.
func TestGrantToNewAccount(t *testing.T) {
	t.Parallel()
	_, client, clk, member := newAccountEnv(t)
	u, err := newUpdater(client, interceptor.WithClock(clk), interceptor.WithRetryNotFound())
	if err != nil {
		t.Fatal(err)
	}
	start := clk.Now()
	got, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", member))
	if err != nil {
		t.Fatalf("with the opt-in: %v", err)
	}
	if members(got, "roles/viewer")[member] != 1 {
		t.Fatalf("policy %v lacks %s", got, member)
	}
	if d := clk.Since(start); d < 10*time.Second || d > interceptor.DefaultDeadline {
		t.Fatalf("waited %v; want the 10s the account took to appear, within the deadline", d)
	}

	srv2, client2, clk2, member2 := newAccountEnv(t)
	u2, err := newUpdater(client2, interceptor.WithClock(clk2))
	if err != nil {
		t.Fatal(err)
	}
	_, err = u2.Update(context.Background(), res, policy.AddBinding("roles/viewer", member2))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "does not exist") ||
		!strings.Contains(err.Error(), "interceptor.WithRetryNotFound()") {
		t.Fatalf("without the opt-in: %v; want INVALID_ARGUMENT naming the option", err)
	}
	if n := srv2.CountCalls(iamtest.MethodSetIamPolicy); n != 1 || len(clk2.Sleeps()) != 0 {
		t.Fatalf("without the opt-in: %d writes, waits %v; want 1 write and no wait", n, clk2.Sleeps())
	}
}

// TestGrantToNewAccountReportsTheServersCode: observers (and so logs,
// metrics and span events) see the server's INVALID_ARGUMENT with class
// Propagation, never a code the Updater made up.
func TestGrantToNewAccountReportsTheServersCode(t *testing.T) {
	t.Parallel()
	_, client, clk, member := newAccountEnv(t)
	var seen []interceptor.Attempt
	u, err := newUpdater(client, interceptor.WithClock(clk), interceptor.WithRetryNotFound(),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) { seen = append(seen, a) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", member)); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 {
		t.Fatalf("observed %d attempts, want the refusals and the final report", len(seen))
	}
	for _, a := range seen[:len(seen)-1] {
		if status.Code(a.Err) != codes.InvalidArgument || a.Class.String() != "Propagation" || a.Reason != interceptor.Retry {
			t.Fatalf("attempt %d: code %v class %v reason %v; want INVALID_ARGUMENT, Propagation, retry",
				a.N, status.Code(a.Err), a.Class, a.Reason)
		}
	}
	if last := seen[len(seen)-1]; last.Reason != interceptor.Succeeded {
		t.Fatalf("final report %+v, want Succeeded", last)
	}
}
