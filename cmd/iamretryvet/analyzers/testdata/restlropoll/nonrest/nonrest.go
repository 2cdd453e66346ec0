// Package nonrest calls no interceptor.NewRESTClient: its operations'
// polls are not reported.
package nonrest

import (
	"context"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"cloud.google.com/go/iam/apiv2/iampb"

	"github.com/iamretry/iamretry/interceptor"
)

func create(ctx context.Context, r *interceptor.Retrier) (*iampb.Policy, error) {
	c, err := interceptor.NewClient(ctx, r, iamv2.NewPoliciesClient)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	op, err := c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{Parent: "policies/p/denypolicies", PolicyId: "p"})
	if err != nil {
		return nil, err
	}
	return op.Wait(ctx)
}

func wait(ctx context.Context, op *iamv2.UpdatePolicyOperation) error {
	_, err := op.Wait(ctx)
	return err
}
