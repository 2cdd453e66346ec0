package interceptor_test

// Quota (issue 28), end to end on every face over the fake: a
// RESOURCE_EXHAUSTED (429) without a server delay is retried no sooner than
// 30 s (with r = 0.5: 30 s plus half of a tenth, 31.5 s), even a create
// that is unsafe to send again; with RetryInfo, its delay is the floor, and
// one past the deadline ends the call at once.

import (
	"context"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// quotaWait is the wait after a call's first quota rejection without a
// server delay, with the rig's r = 0.5.
const quotaWait = 31500 * time.Millisecond

func wantQuotaWait(t *testing.T, g *rig) {
	t.Helper()
	if got := g.clock.Sleeps(); !slices.Equal(got, []time.Duration{quotaWait}) {
		t.Fatalf("waits %v, want [%v]", got, quotaWait)
	}
}

func TestQuotaWithoutServerDelayEveryFace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range e2eKinds {
		t.Run("gRPC "+k.name, func(t *testing.T) {
			g := newRig(t, withGRPC())
			g.fake.FailNext(k.readMethod, 1, codes.ResourceExhausted)
			if err := k.read(ctx, g); err != nil {
				t.Fatal(err)
			}
			wantQuotaWait(t, g)
		})
	}
	t.Run("gRPC unsafe create", func(t *testing.T) {
		g := newRig(t, withGRPC())
		g.fake.FailNext(iamtest.MethodCreateServiceAccount, 1, codes.ResourceExhausted)
		if _, err := g.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "after-quota"}); err != nil {
			t.Fatal(err)
		}
		wantQuotaWait(t, g)
		if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccount); n != 2 {
			t.Fatalf("%d creates reached the fake, want 2 (the rejected one and the one that landed)", n)
		}
	})
	t.Run("REST read", func(t *testing.T) {
		g := newRig(t, withREST(nil))
		g.fake.FailNext(iamtest.MethodProjectsGetIamPolicy, 1, codes.ResourceExhausted)
		if _, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do(); err != nil {
			t.Fatal(err)
		}
		wantQuotaWait(t, g)
	})
	t.Run("REST unsafe create", func(t *testing.T) {
		g := newRig(t, withREST(nil))
		g.fake.FailNext(iamtest.MethodCreateServiceAccount, 1, codes.ResourceExhausted)
		if _, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "after-quota"}).Do(); err != nil {
			t.Fatal(err)
		}
		wantQuotaWait(t, g)
	})
	t.Run("Do", func(t *testing.T) {
		g := newRig(t, withGRPC())
		g.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.ResourceExhausted)
		runs := 0
		err := g.retrier.Do(ctx, "read", func(ctx context.Context) error {
			runs++
			return e2eKinds[1].read(ctx, g)
		})
		if err != nil || runs != 2 {
			t.Fatalf("Do: %d runs, err %v", runs, err)
		}
		wantQuotaWait(t, g)
	})
	t.Run("policy Updater", func(t *testing.T) {
		g := newRig(t, withGRPC())
		u, err := policy.NewUpdater(policy.FromConn(g.conn), g.retrier)
		if err != nil {
			t.Fatal(err)
		}
		g.fake.FailNext(iamtest.MethodSetIamPolicy, 1, codes.ResourceExhausted)
		p, err := u.Update(ctx, g.sa.Name, policy.AddBinding(testRole, testMember))
		if err != nil {
			t.Fatal(err)
		}
		wantQuotaWait(t, g)
		n := 0
		for _, b := range p.GetBindings() {
			for _, m := range b.GetMembers() {
				if b.GetRole() == testRole && m == testMember {
					n++
				}
			}
		}
		if n != 1 {
			t.Fatalf("the member is granted %d times, want once", n)
		}
	})
}

// TestQuotaRetryInfoPastDeadlineEndsAtOnce: the account quota's RetryInfo
// of a day and a second is past the 60 s deadline: the call ends at once
// with the server's error, on the gRPC and REST faces.
func TestQuotaRetryInfoPastDeadlineEndsAtOnce(t *testing.T) {
	t.Parallel()
	g := newRig(t, withGRPC())
	g.fake.SetRetryInfo(86401 * time.Second)
	g.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.ResourceExhausted)
	err := e2eKinds[1].read(context.Background(), g)
	wantCode(t, err, codes.ResourceExhausted)
	if a := g.Attempts(); len(a) != 1 || a[0].Reason != interceptor.DeadlineReached || len(g.clock.Sleeps()) != 0 {
		t.Fatalf("gRPC: attempts %+v sleeps %v, want one, DeadlineReached, no wait", a, g.clock.Sleeps())
	}
	rg := newRig(t, withREST(nil))
	rg.fake.SetRetryInfo(86401 * time.Second)
	rg.fake.FailNext(iamtest.MethodProjectsGetIamPolicy, 1, codes.ResourceExhausted)
	if _, err := rg.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do(); err == nil {
		t.Fatal("REST: the read succeeded")
	}
	if a := rg.Attempts(); len(a) != 1 || a[0].Reason != interceptor.DeadlineReached || len(rg.clock.Sleeps()) != 0 {
		t.Fatalf("REST: attempts %+v sleeps %v, want one, DeadlineReached, no wait", a, rg.clock.Sleeps())
	}
	// A RetryInfo within the deadline is the floor: 40 s over 1.5 s.
	g.reset()
	g.fake.SetRetryInfo(40 * time.Second)
	g.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.ResourceExhausted)
	if err := e2eKinds[1].read(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if got := g.clock.Sleeps(); !slices.Equal(got, []time.Duration{40 * time.Second}) {
		t.Fatalf("waits %v, want [40s]", got)
	}
}
