package interceptor_test

import (
	"context"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestNewClientGivenInterceptorAlready: opts that already add the
// Retrier's interceptor (wired by hand before, then switched to NewClient)
// multiply the attempts (a dial option cannot be inspected, so NewClient
// cannot refuse it): the stacked-retry detector must say so, once.
func TestNewClientGivenInterceptorAlready(t *testing.T) {
	w, wopts := newStackWatch(t)
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline(), withRetrier(wopts...))
	ctx := context.Background()
	opts := append(g.fake.ClientOptions(), option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(g.retrier.UnaryClientInterceptor())))
	c, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	_, _ = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
	n := g.fake.CountCalls(iamtest.AnyMethod)
	if n > oneSchedule && w.warnCount() != 1 {
		t.Fatalf("%d server calls for one schedule of %d and %d Warns: the doubled layer went unreported", n, oneSchedule, w.warnCount())
	}
}
