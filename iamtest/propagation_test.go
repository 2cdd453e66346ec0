package iamtest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
)

func TestPropagationByTime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, withPropagationDelay(10*time.Second))
	sa := createSA(t, f, "p", "fresh-robot")
	reads := map[string]func() error{
		"GetServiceAccount": func() error {
			_, err := f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
			return err
		},
		"GetIamPolicy": func() error {
			_, err := f.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: sa.Name})
			return err
		},
		"SetIamPolicy": func() error {
			_, err := f.admin.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: sa.Name, Policy: &iampb.Policy{}})
			return err
		},
	}
	_, err := f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
	wantCode(t, err, codes.NotFound, "Service account "+sa.Name+" does not exist.")
	for _, read := range reads {
		wantCode(t, read(), codes.NotFound, "Service account "+sa.Name+" does not exist.")
	}
	f.clock.Advance(9999 * time.Millisecond)
	for _, read := range reads {
		wantCode(t, read(), codes.NotFound, "")
	}
	f.clock.Advance(time.Millisecond)
	for name, read := range reads {
		if err := read(); err != nil {
			t.Fatalf("%s after the delay: %v", name, err)
		}
	}
	// Off by default, and settable later.
	f.srv.SetPropagationDelay(0)
	createSA(t, f, "p", "other-robot")
	if _, err := f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/other-robot@p.iam.gserviceaccount.com"}); err != nil {
		t.Fatal(err)
	}
}

func TestPropagationByReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, withPropagationReads(2))
	a := createSA(t, f, "p", "robot-a")
	b := createSA(t, f, "p", "robot-b")
	get := func(sa *adminpb.ServiceAccount) error {
		_, err := f.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name})
		return err
	}
	wantCode(t, get(a), codes.NotFound, "")
	_, err := f.admin.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: a.Email})
	wantCode(t, err, codes.NotFound, "") // the second read of a
	if err := get(a); err != nil {
		t.Fatalf("third read of a: %v", err)
	}
	// Counted per account: b still has both hidden reads.
	wantCode(t, get(b), codes.NotFound, "")
	wantCode(t, get(b), codes.NotFound, "")
	if err := get(b); err != nil {
		t.Fatal(err)
	}
	// The generic IAMPolicy service and list are not gated.
	f.srv.SetPropagationReads(5)
	c := createSA(t, f, "p", "robot-c")
	if _, err := f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: c.Name}); err != nil {
		t.Fatal(err)
	}
	if f.srv.ServiceAccount(c.Email) == nil {
		t.Fatal("helper hides propagating account")
	}
}
