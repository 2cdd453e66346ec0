package main

import (
	"context"
	"fmt"
	"testing"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// TestFakeServerQuotas: fake-server --quotas refuses the sixth deny-policy
// read of a project in one minute with the 429 IAM sends for its v2 quota
// (5 reads and 5 writes a minute per project:
// https://cloud.google.com/iam/quotas), to a real iam/apiv2 client wired as
// the banner shows; without the flag it is answered (NOT_FOUND: the seed
// holds no deny policy).
func TestFakeServerQuotas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("quotas=", on), func(t *testing.T) {
			run := startSeededFake(t, func(f *fakeServerFlags) { f.quotas = on })
			r, err := interceptor.New(interceptor.WithMaxAttempts(1))
			if err != nil {
				t.Fatal(err)
			}
			c, err := interceptor.NewClient(ctx, r, iamv2.NewPoliciesClient, option.WithEndpoint(run.addr),
				option.WithoutAuthentication(), option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const name = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/p"
			var last error
			for range 6 {
				_, last = c.GetPolicy(ctx, &iampb.GetPolicyRequest{Name: name})
			}
			switch {
			case on && status.Code(last) != codes.ResourceExhausted:
				t.Errorf("sixth read in a minute under --quotas: %v, want RESOURCE_EXHAUSTED", last)
			case !on && status.Code(last) != codes.NotFound:
				t.Errorf("sixth read without --quotas: %v, want NOT_FOUND (no such policy)", last)
			}
		})
	}
}
