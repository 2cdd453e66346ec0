package iamtest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// TestSynctestRunsBackoffInNoRealTime runs the admin client's own retries
// (gax backoff on real timers, with the wall clock) against injected
// UNAVAILABLE answers inside a synctest bubble: the bubble's clock jumps over
// every wait, so the test waits no real backoff, and the fake's latency too
// is served by the bubble's clock.
func TestSynctestRunsBackoffInNoRealTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		client, err := admin.NewIamClient(ctx, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
			Name: "projects/p", AccountId: "robot-one"})
		if err != nil {
			t.Fatal(err)
		}

		srv.FailNext(iamtest.MethodGetServiceAccount, 5, codes.Unavailable)
		start := time.Now() // the bubble's clock
		if _, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{
			Name: sa.Name}); err != nil {
			t.Fatalf("GetServiceAccount after gax retries: %v", err)
		}
		if n := srv.CountCalls(iamtest.MethodGetServiceAccount); n != 6 {
			t.Fatalf("%d GetServiceAccount calls, want 6 (5 failures, 1 success)", n)
		}
		if time.Since(start) <= 0 {
			t.Fatal("the retries waited no backoff on the bubble's clock")
		}
		t.Logf("gax backoff on the bubble's clock: %v", time.Since(start))

		srv.SetLatency(iamtest.MethodAdminGetIamPolicy, 10*time.Second)
		start = time.Now()
		if _, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Fatalf("10s of latency took %v on the bubble's clock", d)
		}

		// An hour is longer than the client's own timeout for the method.
		srv.SetLatency(iamtest.MethodAdminGetIamPolicy, time.Hour)
		start = time.Now()
		_, err = client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name})
		if status.Code(err) != codes.DeadlineExceeded || time.Since(start) >= time.Hour {
			t.Fatalf("after %v: %v, want DEADLINE_EXCEEDED at the client's timeout", time.Since(start), err)
		}
	})
}
