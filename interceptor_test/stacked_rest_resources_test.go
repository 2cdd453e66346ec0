package interceptor_test

import (
	"context"
	"testing"

	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestStackedRESTDistinctResourcesOneContext: over REST, a loop over
// distinct resources under one context (a job's context), each read giving
// up in an outage, is not a layer above retrying: no stacked report.
func TestStackedRESTDistinctResourcesOneContext(t *testing.T) {
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(wopts...))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, err := interceptor.NewRESTClient(ctx, g.retrier, crm.NewService, g.fake.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	for _, p := range []string{"projects/a", "projects/b", "projects/c"} {
		if _, err := svc.Projects.GetIamPolicy(p, &crm.GetIamPolicyRequest{}).Context(ctx).Do(); err == nil {
			t.Fatal("read succeeded during an outage")
		}
	}
	if n := w.warnCount(); n != 0 {
		t.Fatalf("%d stacked Warns for three distinct resources read once each", n)
	}
}
