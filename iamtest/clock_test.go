package iamtest_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// The README's composition (an Updater over an interceptor-equipped client)
// on one VirtualClock, with concurrent callers as threads of Go: thread 0
// adds three members to projects/p1 in one Update, thread 1 one member to
// projects/p2, and thread 2 ends a minute-long GetIamPolicy outage. The two
// resources' schedules overlap in virtual time, each read at its own
// schedule's times, and every change lands. (Callers that one Updater
// coalesces wait for one another, which no VirtualClock rule allows: such
// tests run under testing/synctest, see TestSynctestSeparateUpdaters.)
func TestVirtualClockUpdaterConcurrentCallers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := iamtest.NewVirtualClock(start)
	srv := iamtest.NewServer(t, iamtest.WithClock(clock))

	half := interceptor.WithRandom(func() float64 { return 0.5 })
	r, err := interceptor.New(interceptor.WithClock(clock), half, interceptor.WithDeadline(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	client, err := iamapi.NewIamPolicyClient(ctx, append(srv.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithUnaryInterceptor(r.UnaryClientInterceptor())))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if err := interceptor.DisableGAXRetries(client.CallOptions); err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(client, r)
	if err != nil {
		t.Fatal(err)
	}

	const role = "roles/browser"
	member := func(i int) string { return fmt.Sprintf("user:u%d@example.com", i) }
	var (
		mu    sync.Mutex
		ended = map[string][]time.Duration{}
	)
	update := func(ctx context.Context, resource string, is ...int) {
		var ms []policy.Mutation
		for _, i := range is {
			ms = append(ms, policy.AddBinding(role, member(i)))
		}
		if _, err := u.Update(ctx, resource, ms...); err != nil {
			t.Errorf("Update(%s, %v): %v", resource, is, err)
		}
		mu.Lock()
		ended[resource] = append(ended[resource], clock.Since(start))
		mu.Unlock()
	}

	srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	clock.Go(ctx, 3, func(ctx context.Context, th int) {
		switch th {
		case 0:
			update(ctx, "projects/p1", 1, 2, 3)
		case 1:
			update(ctx, "projects/p2", 4)
		case 2:
			if err := clock.Sleep(ctx, time.Minute); err != nil {
				t.Error(err)
			}
			srv.ClearOutage(iamtest.MethodGetIamPolicy)
		}
	})

	// The schedule with r = 0.5: waits 1.5 2.5 4.5 8.5 16.5 32 (capped).
	want := []time.Duration{0, 1500 * time.Millisecond, 4 * time.Second, 8500 * time.Millisecond,
		17 * time.Second, 33500 * time.Millisecond, 65500 * time.Millisecond}
	for _, res := range []string{"projects/p1", "projects/p2"} {
		var reads []time.Duration
		writes := 0
		for _, c := range srv.Calls() {
			switch {
			case c.Resource != res:
			case c.Method == iamtest.MethodGetIamPolicy:
				reads = append(reads, c.Time.Sub(start))
			case c.Method == iamtest.MethodSetIamPolicy:
				writes++
			}
		}
		if !slices.Equal(reads, want) || writes != 1 {
			t.Errorf("%s: reads at %v and %d writes, want reads at %v and one write (one schedule, on its own timeline)", res, reads, writes, want)
		}
		if len(ended[res]) != 1 || ended[res][0] != want[len(want)-1] {
			t.Errorf("%s: Updates returned at %v, want once at %v", res, ended[res], want[len(want)-1])
		}
	}
	if got := clock.Since(start); got != want[len(want)-1] {
		t.Errorf("clock at %v, want %v: the two schedules overlap", got, want[len(want)-1])
	}

	p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range p.GetBindings() {
		if b.GetRole() == role {
			got = append(got, b.GetMembers()...)
		}
	}
	slices.Sort(got)
	if wantM := []string{member(1), member(2), member(3)}; !slices.Equal(got, wantM) {
		t.Errorf("projects/p1 %s: %v, want %v", role, got, wantM)
	}
}
