// Package blindwrite holds SetIamPolicy calls that overwrite (reported)
// and that write with the etag read (not reported).
package blindwrite

import (
	"context"

	iam "cloud.google.com/go/iam"
	admin "cloud.google.com/go/iam/admin/apiv1"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv1 "google.golang.org/api/iam/v1"
)

func fromLiteral(ctx context.Context, c *iamapi.IamPolicyClient) error {
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}}}
	_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}) // want `SetIamPolicy writes a policy built from a literal, with no etag: .* policy.Updater`
	return err
}

func requestVariable(ctx context.Context, c *iamapi.IamPolicyClient) error {
	req := &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Version: 3}}
	_, err := c.SetIamPolicy(ctx, req) // want `built from a literal`
	return err
}

func emptyEtag(ctx context.Context, c *iamapi.IamPolicyClient) error {
	p := new(iampb.Policy)
	p.Etag = []byte("")
	_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}) // want `built from a literal`
	return err
}

func etagCleared(ctx context.Context, c *iamapi.IamPolicyClient) error {
	p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		return err
	}
	p.Etag = nil
	_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}) // want `etag was cleared after the read`
	return err
}

func discovery(svc *iamv1.Service) error {
	req := &iamv1.SetIamPolicyRequest{Policy: &iamv1.Policy{Bindings: []*iamv1.Binding{{Role: "roles/viewer"}}}}
	_, err := svc.Projects.ServiceAccounts.SetIamPolicy("projects/p/serviceAccounts/a@p.iam.gserviceaccount.com", req).Do() // want `built from a literal`
	return err
}

func adminWrapped(ctx context.Context, c *admin.IamClient) error {
	_, err := c.SetIamPolicy(ctx, &admin.SetIamPolicyRequest{Resource: "projects/p/serviceAccounts/a", Policy: &iam.Policy{InternalProto: &iampb.Policy{}}}) // want `built from a literal`
	return err
}

// Not reported: the policy read, changed and written back with its etag.
func readModifyWrite(ctx context.Context, c *iamapi.IamPolicyClient) error {
	p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		return err
	}
	p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:a@example.com"}})
	_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
	return err
}

// Not reported: a literal policy whose etag comes from a read.
func etagFromRead(ctx context.Context, c *iamapi.IamPolicyClient) error {
	old, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		return err
	}
	p := &iampb.Policy{Bindings: old.Bindings, Etag: old.Etag}
	_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
	return err
}

// Not reported: a discovery policy with the etag read.
func discoveryEtag(svc *iamv1.Service, etag string) error {
	req := &iamv1.SetIamPolicyRequest{Policy: &iamv1.Policy{Etag: etag}}
	_, err := svc.Projects.ServiceAccounts.SetIamPolicy("projects/p/serviceAccounts/a", req).Do()
	return err
}

// Not reported: a policy of unknown provenance.
func parameter(ctx context.Context, c *iamapi.IamPolicyClient, p *iampb.Policy) error {
	_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p})
	return err
}

// Not reported: silenced.
func ignored(ctx context.Context, c *iamapi.IamPolicyClient) error {
	_, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{}}) //iamretryvet:ignore blindwrite a fresh sandbox project, nobody else writes it
	return err
}
