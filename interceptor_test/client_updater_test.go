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
// nothing. (Written against NewUpdater(c, opts...); with NewUpdater(c, r)
// the Updater shares g.r.)
func TestUpdaterOverNewClientOneSchedule(t *testing.T) {
	g := newClientRig(t)
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.r, iamapi.NewIamPolicyClient, g.srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u, err := policy.NewUpdater(c, interceptor.WithClock(g.clock), interceptor.WithRandom(halfRandom))
	if err != nil {
		t.Fatal(err)
	}
	g.srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	if _, err := u.Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", "user:a@example.com")); err == nil {
		t.Fatal("Update succeeded during an outage")
	}
	// The Updater's 60 s default deadline: waits 1.5, 2.5, 4.5, 8.5, 16.5
	// (33.5 s); the next, 32 s, would end past 60 s.
	if n := g.srv.CountCalls(iamtest.MethodGetIamPolicy); n != 6 {
		t.Fatalf("%d reads, want 6 (one schedule)", n)
	}
}
