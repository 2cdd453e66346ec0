package iamtest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// Issue 31, item 1: "Maximum number of service accounts on project
// reached." carries a google.rpc.RetryInfo of 86,401 s, as IAM sends it
// (issue 31's audit; the quota: https://cloud.google.com/iam/quotas, 100
// accounts per project), so a Retrier whose deadline is sooner ends the call
// at once with that error (DESIGN: a RetryInfo delay past the deadline ends
// the call). Through admin.NewIamClient wired by interceptor.NewClient,
// under testing/synctest.
func TestAccountQuotaCarriesADayOfRetryInfo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		srv.SetServiceAccountQuota(1)
		r, err := interceptor.New(interceptor.WithDeadline(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		create := func(id string) error {
			_, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: id})
			return err
		}
		if err := create("first-robot"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = create("second-robot")
		if d := time.Since(start); d != 0 {
			t.Errorf("the call waited %v, want none: the server's delay is past the deadline", d)
		}
		st := status.Convert(err)
		if st.Code() != codes.ResourceExhausted || st.Message() != "Maximum number of service accounts on project reached." {
			t.Fatalf("got %v", err)
		}
		var delay time.Duration
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				delay = ri.GetRetryDelay().AsDuration()
			}
		}
		if delay != 86401*time.Second {
			t.Fatalf("RetryInfo delay %v, want 86401s", delay)
		}
		if n := srv.CountCalls(iamtest.MethodCreateServiceAccount); n != 2 {
			t.Fatalf("%d CreateServiceAccount calls, want 2 (no retry)", n)
		}
	})
}
