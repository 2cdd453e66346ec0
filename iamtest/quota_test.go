package iamtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv2 "cloud.google.com/go/iam/apiv2"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// wantQuotaError checks the shape Google's front end answers for a spent
// per-minute quota (https://cloud.google.com/docs/quotas/troubleshoot):
// RESOURCE_EXHAUSTED "Quota exceeded for quota metric ...", an ErrorInfo of
// reason RATE_LIMIT_EXCEEDED, a QuotaFailure, and no RetryInfo (the
// documented quota errors carry none: the library then waits its 30 s
// floor, Service Usage's rule).
func wantQuotaError(t *testing.T, err error, metric string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted || !strings.HasPrefix(st.Message(), "Quota exceeded for quota metric '"+metric+"'") {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED for %q", err, metric)
	}
	var info, failure, retry bool
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d.GetReason() == iamtest.ReasonRateLimitExceeded
		case *errdetails.QuotaFailure:
			failure = len(d.GetViolations()) == 1
		case *errdetails.RetryInfo:
			retry = true
		}
	}
	if !info || !failure || retry {
		t.Fatalf("details of %v: ErrorInfo %v, QuotaFailure %v, RetryInfo %v; want the first two only", err, info, failure, retry)
	}
}

// Issue 31, item 6: IAM v2's quota (deny policies: 5 reads and 5 writes a
// minute per project, https://cloud.google.com/iam/quotas), off by default,
// on with SetQuotas(true): the sixth read of a minute is refused 429 on the
// gRPC face (iam/apiv2 NewPoliciesClient) and the REST one
// (NewPoliciesRESTClient), and the next minute of the fake's clock has a
// fresh quota. Runs under testing/synctest (the fake reads the bubble's
// clock).
func TestQuotaV2DenyReads(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		g, err := iamv2.NewPoliciesClient(ctx, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		get := func(c *iamv2.PoliciesClient) error {
			_, err := c.GetPolicy(ctx, &iamv2pb.GetPolicyRequest{Name: denyParent + "/none"}, noRetry)
			return err
		}
		for i := range iamtest.QuotaV2ReadsPerMinute + 1 { // off by default
			if err := get(g); status.Code(err) != codes.NotFound {
				t.Fatalf("read %d with quotas off: %v", i+1, err)
			}
		}
		srv.SetQuotas(true)
		inBubble(time.Minute) // a fresh minute
		for i := range iamtest.QuotaV2ReadsPerMinute {
			if err := get(g); status.Code(err) != codes.NotFound {
				t.Fatalf("read %d of the minute: %v", i+1, err)
			}
		}
		wantQuotaError(t, get(g), "V2 read requests")
		if n := srv.CountCalls(iamtest.MethodGetPolicy); n != 2*iamtest.QuotaV2ReadsPerMinute+2 {
			t.Fatalf("%d calls logged", n)
		}
		inBubble(time.Minute)
		if err := get(g); status.Code(err) != codes.NotFound {
			t.Fatalf("the next minute: %v", err)
		}
	})
}

// Issue 31, item 6: the same refusal on the REST face (iam/apiv2
// NewPoliciesRESTClient): HTTP 429 with the quota message. The
// fake reads a VirtualClock that stands still, so the test's calls fall in
// one minute.
func TestQuotaV2DenyREST(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t, iamtest.WithClock(newTestClock()))
	r, err := iamv2.NewPoliciesRESTClient(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.SetQuotas(true)
	for i := range iamtest.QuotaV2WritesPerMinute {
		if _, err := r.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: denyParent + "/none"}, noRetry); err == nil {
			t.Fatalf("write %d: deleted a policy that is not there", i+1)
		} else if ae, ok := errors.AsType[*apierror.APIError](err); !ok || ae.HTTPCode() != http.StatusNotFound {
			t.Fatalf("write %d of the minute: %v", i+1, err)
		}
	}
	_, err = r.DeletePolicy(ctx, &iamv2pb.DeletePolicyRequest{Name: denyParent + "/none"}, noRetry)
	var ae *apierror.APIError
	// (apierror.Reason() is checked once issue 30, item 3 lands: today the
	// REST body's legacy errors array makes gax drop the details.)
	if !errors.As(err, &ae) || ae.HTTPCode() != http.StatusTooManyRequests ||
		!strings.Contains(ae.Error(), "Quota exceeded for quota metric 'V2 write requests'") {
		t.Fatalf("REST write past the quota: %v, want 429", err)
	}
}

// Issue 31, item 6: IAM v1's write quota (600 writes a minute per project,
// https://cloud.google.com/iam/quotas) on the admin service: the 601st write
// of a minute (DeleteServiceAccountKey of a key that is not there: the quota
// is charged before the fake acts) is refused 429; reads have their own quota.
func TestQuotaV1AdminWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		c := newClients(t, srv)
		sa := srv.SeedServiceAccount("p", "quota-robot")
		srv.SetQuotas(true)
		set := func() error {
			return c.admin.DeleteServiceAccountKey(ctx, &adminpb.DeleteServiceAccountKeyRequest{Name: sa.Name + "/keys/none"}, noRetry)
		}
		for i := range iamtest.QuotaV1WritesPerMinute {
			if err := set(); status.Code(err) != codes.NotFound {
				t.Fatalf("write %d of the minute: %v", i+1, err)
			}
		}
		wantQuotaError(t, set(), "Write requests")
		if _, err := c.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
			t.Fatalf("a read past the write quota: %v", err)
		}
		srv.SetQuotas(false)
		if err := set(); status.Code(err) != codes.NotFound {
			t.Fatalf("quotas off: %v", err)
		}
	})
}
