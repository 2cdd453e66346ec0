package iamtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// Issue 31, item 4: a grant to a user-managed service account the fake does
// not hold (never created, or deleted) is refused 400 INVALID_ARGUMENT
// "Service account EMAIL does not exist." by default, on the gRPC face
// (resourcemanager's ProjectsClient, iam/apiv1) and the REST one
// (cloudresourcemanager v3); SetRefuseUnknownServiceAccounts(false) lets it
// through; service agents are never refused. Source: IAM answers these
// words for an account it does not hold (users report them for a grant right
// after CreateServiceAccount; https://cloud.google.com/iam/docs/service-accounts-create
// says a new account may take 60 seconds or more to be usable) and for a
// deleted one (https://cloud.google.com/iam/docs/service-accounts-delete-undelete).
func TestGrantToMissingServiceAccountRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	projects, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer projects.Close()
	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	const ghost = "ghost-robot@p.iam.gserviceaccount.com"
	const msg = "Service account " + ghost + " does not exist."
	grant := func(member string) *iampb.SetIamPolicyRequest {
		return &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{
			Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{member}}}}}
	}
	_, err = projects.SetIamPolicy(ctx, grant("serviceAccount:"+ghost), noRetry)
	wantStatus(t, err, codes.InvalidArgument, msg)
	wantStatus(t, c.grant("projects/p/topics/t", "roles/viewer", "serviceAccount:"+ghost), codes.InvalidArgument, msg)
	_, err = svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: &crm.Policy{
		Bindings: []*crm.Binding{{Role: "roles/viewer", Members: []string{"serviceAccount:" + ghost}}}}}).Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest || !strings.Contains(gerr.Message, msg) {
		t.Fatalf("REST grant to a missing account: %v, want 400 %q", err, msg)
	}
	if p := srv.Policy("projects/p"); len(p.GetBindings()) != 0 {
		t.Fatalf("a refused grant was stored: %v", p)
	}

	// Service agents and Google-managed accounts are IAM's: never refused.
	for _, agent := range []string{"service-123@gcp-sa-pubsub.iam.gserviceaccount.com",
		"123-compute@developer.gserviceaccount.com", "p@appspot.gserviceaccount.com"} {
		if _, err := projects.SetIamPolicy(ctx, grant("serviceAccount:"+agent), noRetry); err != nil {
			t.Errorf("grant to %s: %v", agent, err)
		}
	}

	// An account created and deleted through the admin API: granted while
	// it lives, refused once deleted.
	sa := c.createAccount(t, "p", "short-lived")
	if err := c.grant("projects/q", "roles/viewer", "serviceAccount:"+sa.Email); err != nil {
		t.Fatalf("grant to a live account: %v", err)
	}
	if err := c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: sa.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, c.grant("projects/r", "roles/viewer", "serviceAccount:"+sa.Email), codes.InvalidArgument,
		"Service account "+sa.Email+" does not exist.")

	// The control turns it off, for tests that grant to made-up accounts.
	srv.SetRefuseUnknownServiceAccounts(false)
	if _, err := projects.SetIamPolicy(ctx, grant("serviceAccount:"+ghost), noRetry); err != nil {
		t.Fatalf("turned off: %v", err)
	}
}

// Issue 31, item 4: a grant to serviceAccount:EMAIL in a policy that still
// holds deleted:serviceAccount:EMAIL?uid=UID (the account was deleted, its
// bindings turned into the deleted: member, and an account of the same
// email was created again) is refused 400 INVALID_ARGUMENT, as IAM refuses
// it. Sources: https://cloud.google.com/iam/docs/release-notes (2020-07-20:
// "Submitting an IAM policy that contains both deleted and active versions
// of the account (i.e. with the same email address) will result in an
// error"), and the words IAM answers, "Inconsistent representation of
// deleted member: 'deleted:serviceAccount:...?uid=...' and
// 'serviceAccount:...'" (https://github.com/GoogleCloudPlatform/k8s-config-connector/issues/279).
// Removing the deleted: member lets the grant through.
func TestGrantToRecreatedAccountBesideItsDeletedMember(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	old := c.createAccount(t, "p", "deployer")
	if err := c.grant("projects/p", "roles/viewer", "serviceAccount:"+old.Email); err != nil {
		t.Fatal(err)
	}
	if err := c.admin.DeleteServiceAccount(ctx, &adminpb.DeleteServiceAccountRequest{Name: old.Name}, noRetry); err != nil {
		t.Fatal(err)
	}
	deleted := "deleted:serviceAccount:" + old.Email + "?uid=" + old.UniqueId
	if m := c.members(t, "projects/p", "roles/viewer"); len(m) != 1 || m[0] != deleted {
		t.Fatalf("after the delete the binding holds %v, want [%s]", m, deleted)
	}
	again := c.createAccount(t, "p", "deployer")
	if again.UniqueId == old.UniqueId {
		t.Fatal("the re-created account has the old unique ID")
	}
	want := "Inconsistent representation of deleted member: '" + deleted + "' and 'serviceAccount:" + again.Email + "'"
	wantStatus(t, c.grant("projects/p", "roles/editor", "serviceAccount:"+again.Email), codes.InvalidArgument, want)

	// The REST face: the same refusal, 400.
	p, err := svc.Projects.GetIamPolicy("projects/p", &crm.GetIamPolicyRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	p.Bindings = append(p.Bindings, &crm.Binding{Role: "roles/editor", Members: []string{"serviceAccount:" + again.Email}})
	_, err = svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: p}).Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest || !strings.Contains(gerr.Message, want) {
		t.Fatalf("REST: %v, want 400 %q", err, want)
	}

	// Without the deleted: member, the new account is granted.
	pol, err := c.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	pol.Bindings = []*iampb.Binding{{Role: "roles/viewer", Members: []string{"serviceAccount:" + again.Email}}}
	if _, err := c.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: pol}, noRetry); err != nil {
		t.Fatalf("grant once the deleted member is gone: %v", err)
	}
}

// Issue 31, item 4: the refusal has the words of a not-yet-visible account,
// so an Updater under the 404 opt-in waits for the account, within its
// deadline, and lands once it exists (here created 5 s later); without the
// opt-in it returns the refusal at once. Run under testing/synctest.
func TestUpdaterWaitsForMissingAccountUnderOptIn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		r, err := interceptor.New(interceptor.WithDeadline(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		client, err := interceptor.NewClient(ctx, r, resourcemanager.NewProjectsClient, srv.ClientOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		u, err := policy.NewUpdater(client, r)
		if err != nil {
			t.Fatal(err)
		}
		const member = "serviceAccount:late-robot@p.iam.gserviceaccount.com"
		_, err = u.Update(ctx, "projects/p", policy.AddBinding("roles/viewer", member))
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Service account late-robot@p.iam.gserviceaccount.com does not exist.") {
			t.Fatalf("Update without the opt-in: %v, want the refusal at once", err)
		}
		if n := srv.CountCalls(iamtest.MethodProjectsSetIamPolicy); n != 1 {
			t.Fatalf("%d writes without the opt-in, want 1", n)
		}

		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			inBubble(5 * time.Second)
			srv.SeedServiceAccount("p", "late-robot")
		})
		p, err := u.Update(interceptor.RetryNotFoundContext(ctx), "projects/p", policy.AddBinding("roles/viewer", member))
		wg.Wait()
		if err != nil {
			t.Fatalf("Update under the opt-in: %v", err)
		}
		if d := time.Since(start); d < 5*time.Second || d > time.Minute {
			t.Errorf("landed after %v, want after the account appeared (5s) and within the deadline", d)
		}
		if len(p.GetBindings()) != 1 || p.GetBindings()[0].GetMembers()[0] != member {
			t.Errorf("policy %v", p)
		}
	})
}
