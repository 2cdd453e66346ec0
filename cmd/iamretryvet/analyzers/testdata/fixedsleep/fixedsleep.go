// Package fixedsleep holds retry loops around IAM calls that sleep a
// constant (reported) and loops that sleep only after a success, or with
// jitter (not reported).
package fixedsleep

import (
	"context"
	"math/rand/v2"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb2 "cloud.google.com/go/iam/apiv2/iampb"
	iamv1 "google.golang.org/api/iam/v1"
)

const pause = 2 * time.Second

func fixed(ctx context.Context, c *admin.IamClient) (*adminpb.ServiceAccount, error) {
	var err error
	for i := 0; i < 5; i++ { // want `this loop retries an IAM call after a fixed sleep: .* Retrier`
		var sa *adminpb.ServiceAccount
		sa, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
		if err == nil {
			return sa, nil
		}
		time.Sleep(pause)
	}
	return nil, err
}

func fixedAfter(ctx context.Context, svc *iamv1.Service) error {
	for { // want `fixed sleep`
		_, err := svc.Projects.ServiceAccounts.Get("projects/p/serviceAccounts/a").Context(ctx).Do()
		if err != nil {
			select {
			case <-time.After(time.Second):
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

func fixedRange(ctx context.Context, c *iamv2.PoliciesClient) error {
	var err error
	for range 3 { // want `fixed sleep`
		if _, err = c.GetPolicy(ctx, &iampb2.GetPolicyRequest{Name: "policies/x/denypolicies/y"}); err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		return nil
	}
	return err
}

// Not reported: polling for a state sleeps only after a success.
func poll(ctx context.Context, c *iamv2.PoliciesClient) error {
	for {
		p, err := c.GetPolicy(ctx, &iampb2.GetPolicyRequest{Name: "policies/x/denypolicies/y"})
		if err != nil {
			return err
		}
		if p.GetDisplayName() == "ready" {
			return nil
		}
		time.Sleep(5 * time.Second)
	}
}

// Not reported: paging.
func paging(ctx context.Context, svc *iamv1.Service) error {
	token := ""
	for {
		resp, err := svc.Projects.ServiceAccounts.List("projects/p").PageToken(token).Context(ctx).Do()
		if err != nil {
			return err
		}
		if token = resp.NextPageToken; token == "" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Not reported: jittered.
func jittered(ctx context.Context, c *admin.IamClient) error {
	for {
		_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
		if err == nil {
			return nil
		}
		time.Sleep(time.Second + rand.N(time.Second))
	}
}

// Not reported: silenced.
func ignored(ctx context.Context, c *admin.IamClient) error {
	for { //iamretryvet:ignore fixedsleep a single CI runner, no herd
		_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p/serviceAccounts/a"})
		if err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
}
