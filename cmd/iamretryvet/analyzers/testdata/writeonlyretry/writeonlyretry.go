// Package writeonlyretry holds loops and Do functions that retry a write
// alone (reported) and ones that rerun the read with it (not reported).
package writeonlyretry

import (
	"context"
	"errors"
	"log"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb2 "cloud.google.com/go/iam/apiv2/iampb"
	iamv1 "google.golang.org/api/iam/v1"

	"github.com/iamretry/iamretry/interceptor"
)

func retryWrite(ctx context.Context, c *iamapi.IamPolicyClient, p *iampb.Policy) error {
	for attempt := 0; attempt < 5; attempt++ { // want `this loop retries SetIamPolicy alone after it fails: .*\(policy.Updater`
		_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
		if err == nil {
			return nil
		}
	}
	return errors.New("gave up")
}

func retryRole(ctx context.Context, c *admin.IamClient, role *adminpb.Role) {
	for range 3 { // want `retries UpdateRole alone`
		if _, err := c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: role.Name, Role: role}); err != nil {
			continue
		}
		break
	}
}

func retryDeny(ctx context.Context, c *iamv2.PoliciesClient, p *iampb2.Policy) {
	var err error
	for err = errors.New("not yet"); err != nil; { // want `retries UpdatePolicy alone`
		_, err = c.UpdatePolicy(ctx, &iampb2.UpdatePolicyRequest{Policy: p})
	}
}

func retryDiscovery(svc *iamv1.Service, req *iamv1.SetIamPolicyRequest) {
	for { // want `retries SetIamPolicy alone`
		_, err := svc.Projects.ServiceAccounts.SetIamPolicy("projects/p/serviceAccounts/a", req).Do()
		if err != nil {
			log.Print(err)
			continue
		}
		return
	}
}

func doWrite(ctx context.Context, r *interceptor.Retrier, c *iamapi.IamPolicyClient, p *iampb.Policy) error { // want doWrite:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "set", func(ctx context.Context) error { // want `Retrier.Do retries SetIamPolicy alone`
		_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
		return err
	})
}

// Not reported: the read is rerun with the write.
func readModifyWriteLoop(ctx context.Context, c *iamapi.IamPolicyClient) error {
	for {
		p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
		if err != nil {
			return err
		}
		p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:a@example.com"}})
		if _, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}); err == nil {
			return nil
		}
	}
}

// Not reported: one write per resource, no retry.
func perResource(ctx context.Context, c *iamapi.IamPolicyClient, resources []string, p *iampb.Policy) {
	for _, res := range resources {
		if _, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: p}); err != nil {
			log.Print(err)
		}
	}
}

// Not reported: one write per request, indexed.
func perRequest(ctx context.Context, c *iamapi.IamPolicyClient, reqs []*iampb.SetIamPolicyRequest) {
	for i := 0; i < len(reqs); i++ {
		if _, err := c.SetIamPolicy(ctx, reqs[i]); err != nil {
			log.Print(err)
		}
	}
}

// Not reported: a failure ends the loop.
func stopsOnError(ctx context.Context, c *admin.IamClient, roles []*adminpb.Role) error {
	for i := 0; i < len(roles); i++ {
		if _, err := c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: "r", Role: roles[0]}); err != nil {
			return err
		}
	}
	return nil
}

// Not reported: Do reruns the read with the write.
func doReadModifyWrite(ctx context.Context, r *interceptor.Retrier, c *iamapi.IamPolicyClient) error { // want doReadModifyWrite:`callsOwner\(interceptor.Retrier.Do\)`
	return r.Do(ctx, "rmw", func(ctx context.Context) error {
		p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
		if err != nil {
			return err
		}
		_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
		return err
	})
}

// Not reported: silenced.
func ignored(ctx context.Context, c *iamapi.IamPolicyClient, p *iampb.Policy) {
	for range 3 { //iamretryvet:ignore writeonlyretry p is re-read by the caller between runs
		if _, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}); err == nil {
			return
		}
	}
}
