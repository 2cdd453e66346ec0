package interceptor_test

import (
	"context"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestStackedComparesContentNotIdentity (issue 33 item 3): a loop over
// distinct resources is never a retry. Over gRPC, a loop that reuses one
// request struct for three accounts under fresh contexts; over REST, a
// loop of QueryGrantableRoles over three projects under one context (the
// method names its resource in the body): each read gives up in an outage,
// and none is reported as stacked. The same request again, content and
// all, still is.
func TestStackedComparesContentNotIdentity(t *testing.T) {
	t.Parallel()
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(append(wopts, interceptor.WithMaxAttempts(2))...))
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	svc, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, g.fake.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)

	req := &adminpb.GetServiceAccountRequest{}
	for _, a := range []string{"a1", "a2", "a3"} {
		req.Name = "projects/p1/serviceAccounts/" + a + "@p1.iam.gserviceaccount.com"
		fresh, cancel := context.WithCancel(ctx)
		if _, err := c.GetServiceAccount(fresh, req); err == nil {
			t.Fatal("read succeeded during an outage")
		}
		cancel()
	}
	if n := w.stacked(t, getSAMethod); n != 0 || w.warnCount() != 0 {
		t.Fatalf("one request struct reused for three accounts: stacked %d, %d Warns; want 0, 0", n, w.warnCount())
	}

	shared, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, p := range []string{"p1", "p2", "p3"} {
		q := &iamv1.QueryGrantableRolesRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/" + p}
		if _, err := svc.Roles.QueryGrantableRoles(q).Context(shared).Do(); err == nil {
			t.Fatal("query succeeded during an outage")
		}
	}
	const queryMethod = "google.iam.admin.v1.IAM/QueryGrantableRoles"
	if n := w.stacked(t, queryMethod); n != 0 || w.warnCount() != 0 {
		t.Fatalf("QueryGrantableRoles over three projects under one context: stacked %d, %d Warns; want 0, 0", n, w.warnCount())
	}

	// The same content again: a retry of the caller's own, reported.
	g.clock.Advance(3 * time.Minute)
	q := &iamv1.QueryGrantableRolesRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p9"}
	for range 2 {
		_, _ = svc.Roles.QueryGrantableRoles(q).Context(shared).Do()
	}
	if n := w.stacked(t, queryMethod); n != 1 {
		t.Fatalf("the same query again under the same context: stacked %d, want 1", n)
	}
	for range 2 {
		fresh, cancel := context.WithCancel(ctx)
		_, _ = c.GetServiceAccount(fresh, req)
		cancel()
	}
	if n := w.stacked(t, getSAMethod); n != 1 {
		t.Fatalf("the same request value and content again at once: stacked %d, want 1", n)
	}
}
