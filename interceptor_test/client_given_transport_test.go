package interceptor_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestNewRESTClientGivenClientAlreadyWired: a client handed to
// NewRESTClient whose transport is already the Retrier's RoundTripper (a
// user who wired it by hand, then switched to NewRESTClient) must not
// multiply the attempts: one schedule reaches the server, or the client is
// refused with an error that says why.
func TestNewRESTClientGivenClientAlreadyWired(t *testing.T) {
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	hc := g.fake.HTTPClient()
	wired := &http.Client{Transport: g.retrier.RoundTripper(hc.Transport)}
	svc, err := newIAMService(ctx, g, append(g.fake.RESTClientOptions(), option.WithHTTPClient(wired)))
	if err != nil {
		if !strings.Contains(err.Error(), "already") || !strings.Contains(err.Error(), "RoundTripper") {
			t.Fatalf("refused with an error that does not say why: %v", err)
		}
		return
	}
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	_, _ = svc.Projects.ServiceAccounts.Get("projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com").Context(ctx).Do()
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != oneSchedule {
		t.Fatalf("%d server calls, want %d (one schedule): two layers of one Retrier", n, oneSchedule)
	}
}

func newIAMService(ctx context.Context, g *rig, opts []option.ClientOption) (*iamv1.Service, error) {
	return interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, opts...)
}
