// Package restlropoll builds clients with interceptor.NewRESTClient: its
// operations polled with gax's retries on are reported; polls given
// gax.WithRetry, or whose options are unknown, and operations of clients
// built otherwise are not.
package restlropoll

import (
	"context"
	"time"

	iamv2 "cloud.google.com/go/iam/apiv2"
	"cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/longrunning"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/iamretry/iamretry/interceptor"
)

const parent = "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fp/denypolicies"

func create(ctx context.Context, r *interceptor.Retrier) (*iampb.Policy, error) {
	c, err := interceptor.NewRESTClient(ctx, r, iamv2.NewPoliciesRESTClient)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	op, err := c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{Parent: parent, PolicyId: "p"})
	if err != nil {
		return nil, err
	}
	return op.Wait(ctx) // want `iam.CreatePolicyOperation.Wait polls with gax's retries on, above the Retrier \(a REST client keeps its operations client private, out of interceptor.NewRESTClient's reach\): pass gax.WithRetry\(nil\)`
}

// Other gax options keep gax's retries on.
func pollLoop(ctx context.Context, c *iamv2.PoliciesClient) error {
	op, err := c.DeletePolicy(ctx, &iampb.DeletePolicyRequest{Name: parent + "/p"})
	if err != nil {
		return err
	}
	timeout := gax.WithTimeout(time.Minute)
	for !op.Done() {
		if _, err := op.Poll(ctx, timeout); err != nil { // want `iam.DeletePolicyOperation.Poll polls with gax's retries on`
			return err
		}
	}
	return nil
}

// An operation of unknown provenance, in this package, is the REST
// client's.
func update(ctx context.Context, op *iamv2.UpdatePolicyOperation) error {
	_, err := op.Wait(ctx, gax.WithTimeout(time.Minute), gax.WithPath("x")) // want `iam.UpdatePolicyOperation.Wait polls`
	return err
}

func raw(ctx context.Context, op *longrunning.Operation) error {
	if err := op.WaitWithInterval(ctx, &emptypb.Empty{}, time.Second); err != nil { // want `longrunning.Operation.WaitWithInterval polls`
		return err
	}
	return op.Poll(ctx, &emptypb.Empty{}) // want `longrunning.Operation.Poll polls`
}

// Not reported: gax's retries off, as the docs say.
func noRetry(ctx context.Context, c *iamv2.PoliciesClient) error {
	op, err := c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{Parent: parent, PolicyId: "p"})
	if err != nil {
		return err
	}
	if _, err := op.Poll(ctx, gax.WithTimeout(time.Minute), gax.WithRetry(nil)); err != nil {
		return err
	}
	off := gax.WithRetry(nil)
	_, err = op.Wait(ctx, off)
	return err
}

var noGAXRetry = gax.WithRetry(nil)

// Not reported: options of unknown value (a package variable, a spread, a
// parameter).
func unknown(ctx context.Context, op *iamv2.UpdatePolicyOperation, opt gax.CallOption, opts ...gax.CallOption) error {
	if _, err := op.Poll(ctx, noGAXRetry); err != nil {
		return err
	}
	if _, err := op.Poll(ctx, opts...); err != nil {
		return err
	}
	_, err := op.Wait(ctx, opt)
	return err
}

// Not reported: interceptor.NewClient turns gax's retries off in the gRPC
// client's LROClient, and a client built directly has gax as its only
// owner (unwiredclient's concern).
func grpcClients(ctx context.Context, r *interceptor.Retrier) error {
	c, err := interceptor.NewClient(ctx, r, iamv2.NewPoliciesClient)
	if err != nil {
		return err
	}
	op, err := c.CreatePolicy(ctx, &iampb.CreatePolicyRequest{Parent: parent, PolicyId: "p"})
	if err != nil {
		return err
	}
	if _, err := op.Wait(ctx); err != nil {
		return err
	}
	get := func(ctx context.Context) error {
		op, err := c.DeletePolicy(ctx, &iampb.DeletePolicyRequest{Name: parent + "/p"})
		if err != nil {
			return err
		}
		_, err = op.Wait(ctx)
		return err
	}
	return get(ctx)
}

// Not reported: not a poll; silenced.
func others(ctx context.Context, op *iamv2.CreatePolicyOperation) error {
	if op.Done() || op.Name() == "" {
		return nil
	}
	_, err := op.Wait(ctx) //iamretryvet:ignore restlropoll the server answers at once
	return err
}
