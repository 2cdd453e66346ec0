package interceptor_test

import (
	"context"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRetryAtOneLayer measures what stacking retries costs: the admin
// client's own gax retries (UNAVAILABLE and DEADLINE_EXCEEDED on
// GetServiceAccount, 100 ms growing by 1.3) each run the interceptor's whole
// schedule. With DisableGAXRetries the interceptor alone decides.
//
// gax sleeps on the wall clock, so the case without the helper runs for a
// bounded real second (gax's own timeout shortened from 60 s to 1 s); the
// interceptor runs on a virtual clock set an hour back, so that the real
// deadline gax puts on the context never looks near to it and each gax
// attempt gets the interceptor's full WithMaxAttempts(4).
func TestRetryAtOneLayer(t *testing.T) {
	t.Parallel()
	const perLayer = 4
	measure := func(t *testing.T, disable bool) (calls int, err error) {
		srv := iamtest.NewServer(t)
		srv.SetFailureRate(iamtest.MethodGetServiceAccount, 1, grpccodes.Unavailable)
		r, err := interceptor.New(
			interceptor.WithClock(vclock.At(time.Now().Add(-time.Hour))),
			interceptor.WithMaxAttempts(perLayer),
			interceptor.WithoutRetryBudget(),
		)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		c, err := admin.NewIamClient(ctx, append(srv.ClientOptions(),
			option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if disable {
			if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
				t.Fatal(err)
			}
		} else {
			// The admin client's own retry settings, with gax's timeout cut
			// to a second so the test ends.
			c.CallOptions.GetServiceAccount = append(c.CallOptions.GetServiceAccount, gax.WithTimeout(time.Second))
		}
		_, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a@p.iam.gserviceaccount.com"})
		return srv.CountCalls(iamtest.MethodGetServiceAccount), err
	}

	with, errWith := measure(t, true)
	without, errWithout := measure(t, false)
	t.Logf("GetServiceAccount during an outage, interceptor WithMaxAttempts(%d): with DisableGAXRetries %d attempts; without it %d attempts in 1 s (x%.1f)",
		perLayer, with, without, float64(without)/float64(with))
	if with != perLayer || status.Code(errWith) != grpccodes.Unavailable {
		t.Fatalf("with DisableGAXRetries: %d attempts (%v), want exactly %d", with, errWith, perLayer)
	}
	if without < 2*perLayer {
		t.Fatalf("without it: %d attempts (%v), want at least two of the interceptor's schedules (%d)", without, errWithout, 2*perLayer)
	}
}
