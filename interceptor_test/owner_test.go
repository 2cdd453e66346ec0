package interceptor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/internal/vclock"
)

// ownerKind is a Client the Updater runs over, built as a user builds it:
// with the interceptor as a dial option when stacked, gax's defaults kept
// (the Updater turns gax's retries off on its own calls).
type ownerKind struct {
	name     string
	get, set iamtest.Method // the methods as the fake logs them
	// make returns the client and the resource to update.
	make func(t *testing.T, srv *iamtest.Server, copts []option.ClientOption, dial grpc.DialOption) (policy.Client, string)
}

var ownerKinds = []ownerKind{
	{"IamPolicyClient", iamtest.MethodGetIamPolicy, iamtest.MethodSetIamPolicy,
		func(t *testing.T, _ *iamtest.Server, copts []option.ClientOption, _ grpc.DialOption) (policy.Client, string) {
			c, err := iamapi.NewIamPolicyClient(context.Background(), copts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c, "projects/p1/topics/t1"
		}},
	{"FromAdmin", iamtest.MethodAdminGetIamPolicy, iamtest.MethodAdminSetIamPolicy,
		func(t *testing.T, _ *iamtest.Server, copts []option.ClientOption, _ grpc.DialOption) (policy.Client, string) {
			c, err := admin.NewIamClient(context.Background(), copts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			sa, err := c.CreateServiceAccount(context.Background(), &adminpb.CreateServiceAccountRequest{Name: "projects/p1", AccountId: "robot-main"})
			if err != nil {
				t.Fatal(err)
			}
			return policy.FromAdmin(c), sa.GetName()
		}},
	{"FromConn", iamtest.MethodGetIamPolicy, iamtest.MethodSetIamPolicy,
		func(t *testing.T, srv *iamtest.Server, _ []option.ClientOption, dial grpc.DialOption) (policy.Client, string) {
			var extra []grpc.DialOption
			if dial != nil {
				extra = append(extra, dial)
			}
			conn, err := srv.Dial(context.Background(), extra...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return policy.FromConn(conn), "projects/p1/topics/t1"
		}},
	{"resourcemanager.ProjectsClient", iamtest.MethodProjectsGetIamPolicy, iamtest.MethodProjectsSetIamPolicy,
		func(t *testing.T, _ *iamtest.Server, copts []option.ClientOption, _ grpc.DialOption) (policy.Client, string) {
			c, err := resourcemanager.NewProjectsClient(context.Background(), copts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c, "projects/p1"
		}},
}

type outage struct {
	name  string
	start func(srv *iamtest.Server, k ownerKind)
}

var outages = []outage{
	{"read outage", func(srv *iamtest.Server, k ownerKind) { srv.SetFailureRate(k.get, 1, grpccodes.Unavailable) }},
	{"write outage", func(srv *iamtest.Server, k ownerKind) { srv.SetFailureRate(k.set, 1, grpccodes.Unavailable) }},
	{"lost write answer", func(srv *iamtest.Server, k ownerKind) { srv.LoseNextAnswers(k.set, 1) }},
}

// ownerRun is what one Update made the server see.
type ownerRun struct {
	gets, sets int
	elapsed    time.Duration
	code       grpccodes.Code
	granted    int // how often the member is in the stored policy
}

// runOwner runs one Update through a client of kind k during outage o, with
// the interceptor under the Updater when stacked, everything on one
// virtual clock with the same jitter draws.
func runOwner(t *testing.T, k ownerKind, o outage, stacked bool) ownerRun {
	clk := vclock.New()
	srv := iamtest.NewServer(t, iamtest.WithClock(&rigLatency{now: clk.Now}))
	copts := slices.Clip(srv.ClientOptions())
	// One Retrier for the Updater and, when stacked, the interceptor.
	r, err := interceptor.New(interceptor.WithClock(clk), interceptor.WithRandom(halfRandom))
	if err != nil {
		t.Fatal(err)
	}
	var dial grpc.DialOption
	if stacked {
		dial = grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())
		copts = append(copts, option.WithGRPCDialOption(dial))
	}
	c, resource := k.make(t, srv, copts, dial)
	u, err := policy.NewUpdater(c, r)
	if err != nil {
		t.Fatal(err)
	}
	const member = "user:alice@example.com"
	srv.ResetCalls()
	o.start(srv, k)
	start := clk.Now()
	_, err = u.Update(context.Background(), resource, policy.AddBinding("roles/viewer", member))
	run := ownerRun{
		gets: srv.CountCalls(k.get), sets: srv.CountCalls(k.set),
		elapsed: clk.Since(start), code: status.Code(err),
	}
	srv.ResetFaults()
	for _, b := range srv.Policy(resource).GetBindings() {
		for _, m := range b.GetMembers() {
			if m == member {
				run.granted++
			}
		}
	}
	return run
}

// TestUpdaterOverInterceptorRetriesAtOneLayer: composed as the README shows
// (the Updater over a client that carries the interceptor, gax's defaults
// kept), the server sees exactly the attempts of the Updater alone and the
// caller waits exactly as long, for every kind of Client, through a full
// read outage, a full write outage and a lost write answer; the change lands
// exactly once when it can land at all.
func TestUpdaterOverInterceptorRetriesAtOneLayer(t *testing.T) {
	t.Parallel()
	for _, k := range ownerKinds {
		for _, o := range outages {
			t.Run(k.name+"/"+o.name, func(t *testing.T) {
				alone := runOwner(t, k, o, false)
				stacked := runOwner(t, k, o, true)
				t.Logf("alone: %d reads %d writes %v %v; over the interceptor: %d reads %d writes %v %v",
					alone.gets, alone.sets, alone.elapsed, alone.code, stacked.gets, stacked.sets, stacked.elapsed, stacked.code)
				if alone != stacked {
					t.Fatalf("over the interceptor %+v, alone %+v", stacked, alone)
				}
				if alone.elapsed > interceptor.DefaultDeadline {
					t.Fatalf("waited %v, past the deadline", alone.elapsed)
				}
				wantGranted := 0
				if o.name == "lost write answer" {
					wantGranted = 1
					if alone.code != grpccodes.OK {
						t.Fatalf("lost answer: %v", alone.code)
					}
				}
				if alone.granted != wantGranted {
					t.Fatalf("granted %d times, want %d", alone.granted, wantGranted)
				}
			})
		}
	}
}
