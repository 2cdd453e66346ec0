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
	g := newClientRig(t)
	ctx := context.Background()
	hc := g.srv.HTTPClient()
	wired := &http.Client{Transport: g.r.RoundTripper(hc.Transport)}
	svc, err := newIAMService(ctx, g, append(g.srv.RESTClientOptions(), option.WithHTTPClient(wired)))
	if err != nil {
		if !strings.Contains(err.Error(), "already") || !strings.Contains(err.Error(), "RoundTripper") {
			t.Fatalf("refused with an error that does not say why: %v", err)
		}
		return
	}
	g.srv.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	_, _ = svc.Projects.ServiceAccounts.Get("projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com").Context(ctx).Do()
	if n := g.srv.CountCalls(iamtest.AnyMethod); n != oneSchedule {
		t.Fatalf("%d server calls, want %d (one schedule): two layers of one Retrier", n, oneSchedule)
	}
}

func newIAMService(ctx context.Context, g *clientRig, opts []option.ClientOption) (*iamv1.Service, error) {
	return interceptor.NewRESTClient(ctx, g.r, iamv1.NewService, opts...)
}
