package iamtest_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// condition is a valid IAM condition.
func condition() *expr.Expr {
	return &expr.Expr{Title: "until 2030", Expression: `request.time < timestamp("2030-01-01T00:00:00Z")`}
}

func TestFailNextWithQuotaExceededError(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	srv.SetRetryInfo(30 * time.Second)
	srv.FailNextWith(iamtest.MethodGetIamPolicy, 2, iamtest.QuotaExceededError())
	for range 2 {
		_, err := c.getPolicy("folders/q", 3)
		wantStatus(t, err, codes.ResourceExhausted,
			"Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute' of service 'iam.googleapis.com' for consumer 'project_number:0'.")
		var quota, retry bool
		for _, d := range status.Convert(err).Details() {
			switch d := d.(type) {
			case *errdetails.QuotaFailure:
				quota = true
			case *errdetails.RetryInfo:
				retry = d.GetRetryDelay().AsDuration() == 30*time.Second
			}
		}
		if reasonOf(err) != iamtest.ReasonRateLimitExceeded || !quota || !retry {
			t.Fatalf("details %v: want ErrorInfo %s, QuotaFailure, RetryInfo 30s", status.Convert(err).Details(), iamtest.ReasonRateLimitExceeded)
		}
	}
	if _, err := c.getPolicy("folders/q", 3); err != nil {
		t.Fatalf("after the script: %v", err)
	}
	if got := codesOf(srv, iamtest.MethodGetIamPolicy); len(got) != 3 || got[0] != codes.ResourceExhausted {
		t.Fatalf("call log %v", got)
	}
}

func TestFailNextWithPermissionDeniedError(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	sa := srv.SeedServiceAccount("p", "robot-one")
	srv.FailNextWith(iamtest.MethodGetServiceAccount, 1, iamtest.PermissionDeniedError("iam.serviceAccounts.get", sa.Name))
	srv.FailNextWith(iamtest.MethodGetServiceAccount, 0, iamtest.QuotaExceededError()) // nothing
	_, err := c.admin.GetServiceAccount(context.Background(), &adminpb.GetServiceAccountRequest{Name: sa.Name}, noRetry)
	wantStatus(t, err, codes.PermissionDenied,
		"Permission 'iam.serviceAccounts.get' denied on resource '"+sa.Name+"' (or it may not exist).")
	var meta map[string]string
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			meta = ei.GetMetadata()
		}
	}
	if reasonOf(err) != iamtest.ReasonPermissionDenied || meta["permission"] != "iam.serviceAccounts.get" || meta["resource"] != sa.Name {
		t.Fatalf("ErrorInfo reason %q metadata %v", reasonOf(err), meta)
	}
	if _, err := c.getAccount(sa.Email); err != nil {
		t.Fatalf("after the script: %v", err)
	}
	// An error of the test's own goes through as it is, queued with FailNext.
	srv.FailNext(iamtest.MethodGetServiceAccount, 1, codes.Internal)
	srv.FailNextWith(iamtest.MethodGetServiceAccount, 1, status.Error(codes.Unauthenticated, "token expired"))
	_, err = c.getAccount(sa.Email)
	wantStatus(t, err, codes.Internal, "")
	_, err = c.getAccount(sa.Email)
	wantStatus(t, err, codes.Unauthenticated, "token expired")
}
