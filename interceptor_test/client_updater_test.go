package interceptor_test

import (
	"context"
	"testing"

	iamapi "cloud.google.com/go/iam/apiv1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestUpdaterOverNewClientOneSchedule: an Updater over a client built by
// NewClient makes the attempts of one schedule during an outage: the
// client's interceptor passes the Updater's calls through, and gax retries
// nothing. The Updater shares the client's Retrier, g.r.
func TestUpdaterOverNewClientOneSchedule(t *testing.T) {
	t.Parallel()
	g := newClientRig(t)
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.r, iamapi.NewIamPolicyClient, g.srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u, err := policy.NewUpdater(c, g.r)
	if err != nil {
		t.Fatal(err)
	}
	g.srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	if _, err := u.Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", "user:a@example.com")); err == nil {
		t.Fatal("Update succeeded during an outage")
	}
	if n := g.srv.CountCalls(iamtest.MethodGetIamPolicy); n != oneSchedule {
		t.Fatalf("%d reads, want %d (one schedule)", n, oneSchedule)
	}
}
