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

// updaterSchedule is the attempts of one read-modify-write under an outage
// within the rig's 2 min deadline: oneSchedule, then, since the next 32 s
// would end past the deadline with 22.5 s left, retries that halve the time
// left while that is at least 1 s apart (11.25, 5.625, 2.8125, 1.40625 s;
// issue 28: a change is not given up with time left).
const updaterSchedule = oneSchedule + 4

// TestUpdaterOverNewClientOneSchedule: an Updater over a client built by
// NewClient makes the attempts of one schedule during an outage: the
// client's interceptor passes the Updater's calls through, and gax retries
// nothing. The Updater shares the client's Retrier, g.retrier.
func TestUpdaterOverNewClientOneSchedule(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.retrier, iamapi.NewIamPolicyClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	u, err := policy.NewUpdater(c, g.retrier)
	if err != nil {
		t.Fatal(err)
	}
	g.fake.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	if _, err := u.Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", "user:a@example.com")); err == nil {
		t.Fatal("Update succeeded during an outage")
	}
	if n := g.fake.CountCalls(iamtest.MethodGetIamPolicy); n != updaterSchedule {
		t.Fatalf("%d reads, want %d (one schedule)", n, updaterSchedule)
	}
}
