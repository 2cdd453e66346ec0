package iamtest_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv1 "google.golang.org/api/iam/v1"
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

// Issue 31, item 1: an account's 11th user-managed key
// (https://cloud.google.com/iam/quotas: 10 keys per service account). With
// SetKeyLimitExhausted IAM's older answer, RESOURCE_EXHAUSTED "Maximum
// number of keys on account reached." with a RetryInfo of 86,401 s (gcloud's
// output in https://github.com/kubeflow/pipelines/issues/348), which a
// Retrier with a sooner deadline ends at once; by default IAM's answer since
// 2022, FAILED_PRECONDITION "Precondition check failed."
// (https://github.com/googleapis/google-api-dotnet-client/issues/2027).
// Through admin.NewIamClient wired by interceptor.NewClient, under
// testing/synctest; the REST face in TestKeyLimitREST.
func TestKeyLimitCarriesADayOfRetryInfo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		r, err := interceptor.New(interceptor.WithDeadline(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		sa, err := client.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p", AccountId: "key-holder"})
		if err != nil {
			t.Fatal(err)
		}
		mint := func() error {
			_, err := client.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name})
			return err
		}
		for range 10 {
			if err := mint(); err != nil {
				t.Fatal(err)
			}
		}
		err = mint()
		if st := status.Convert(err); st.Code() != codes.FailedPrecondition || st.Message() != "Precondition check failed." {
			t.Fatalf("11th key by default: %v", err)
		}

		srv.SetKeyLimitExhausted(true)
		calls := srv.CountCalls(iamtest.MethodCreateServiceAccountKey)
		start := time.Now()
		err = mint()
		if d := time.Since(start); d != 0 {
			t.Errorf("the call waited %v, want none: the server's delay is past the deadline", d)
		}
		st := status.Convert(err)
		if st.Code() != codes.ResourceExhausted || st.Message() != "Maximum number of keys on account reached." {
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
		if n := srv.CountCalls(iamtest.MethodCreateServiceAccountKey) - calls; n != 1 {
			t.Fatalf("%d CreateServiceAccountKey calls, want 1 (no retry)", n)
		}
	})
}

// TestKeyLimitREST: the 11th key over REST (POST
// /v1/{name=projects/*/serviceAccounts/*}/keys): HTTP 400 by default, 429
// with SetKeyLimitExhausted (sources in TestKeyLimitCarriesADayOfRetryInfo).
func TestKeyLimitREST(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc := newIAMREST(t, srv)
	sa := c.createAccount(t, "p", "key-holder")
	for range 10 {
		if _, err := svc.Projects.ServiceAccounts.Keys.Create(sa.Name, &iamv1.CreateServiceAccountKeyRequest{}).Do(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := svc.Projects.ServiceAccounts.Keys.Create(sa.Name, &iamv1.CreateServiceAccountKeyRequest{}).Do()
	wantHTTP(t, "the 11th key", err, http.StatusBadRequest, "Precondition check failed.")
	srv.SetKeyLimitExhausted(true)
	_, err = svc.Projects.ServiceAccounts.Keys.Create(sa.Name, &iamv1.CreateServiceAccountKeyRequest{}).Do()
	wantHTTP(t, "the 11th key", err, http.StatusTooManyRequests, "Maximum number of keys on account reached.")
}
