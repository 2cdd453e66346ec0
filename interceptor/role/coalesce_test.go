package role_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestCoalescing50: 50 goroutines adding each its own permission to one
// custom role through one Updater, against the fake at 50 ms a call (read
// and write), in a synctest bubble (the fake's and the Retrier's time are
// the bubble's): the Updates are coalesced, at most 5 writes in all, every
// permission lands once, and all are done within 1.5 s of virtual time.
func TestCoalescing50(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := iamtest.NewServer(t)
		r, err := interceptor.New()
		if err != nil {
			t.Fatal(err)
		}
		c, err := admin.NewIamClient(ctx, append(srv.ClientOptions(),
			option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "deployer",
			Role: &adminpb.Role{Title: "Deployer", IncludedPermissions: []string{"run.services.get"}}}); err != nil {
			t.Fatal(err)
		}
		u, err := role.NewUpdater(c, r)
		if err != nil {
			t.Fatal(err)
		}
		srv.SetLatency(iamtest.MethodGetRole, 50*time.Millisecond)
		srv.SetLatency(iamtest.MethodUpdateRole, 50*time.Millisecond)
		srv.ResetCalls()
		const n = 50
		perm := func(i int) string { return fmt.Sprintf("svc.things.verb%d", i) }
		start := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if _, err := u.Update(ctx, roleName, role.AddPermissions(perm(i))); err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		writes := srv.CountCalls(iamtest.MethodUpdateRole)
		t.Logf("%d callers of one role Updater: %d writes, %d reads, all done in %v", n, writes, srv.CountCalls(iamtest.MethodGetRole), took)
		if writes > 5 || took > 1500*time.Millisecond {
			t.Errorf("%d writes in %v; want at most 5 within 1.5s", writes, took)
		}
		stored := srv.CustomRole(roleName).GetIncludedPermissions()
		for i := range n {
			if c := strings.Count(" "+strings.Join(stored, " ")+" ", " "+perm(i)+" "); c != 1 {
				t.Errorf("%s in the role %d times", perm(i), c)
			}
		}
	})
}

// TestChangeRunsOnItsCallersGoroutine: each caller's Change runs on that
// caller's own goroutine (its stack shows the caller), also when its Update
// is coalesced with others, and a panic in it is recovered by its caller.
func TestChangeRunsOnItsCallersGoroutine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	e.srv.SetLatency(iamtest.MethodGetRole, 50*time.Millisecond)
	e.srv.SetLatency(iamtest.MethodUpdateRole, 50*time.Millisecond)
	u, err := role.NewUpdater(e.admin, e.r)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	seen := make([]bool, n)
	panicked := make([]any, n)
	e.clock.Go(context.Background(), 1, func(ctx context.Context, _ int) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer func() { panicked[i] = recover() }()
				updateFromCaller(ctx, u, i, func(r *adminpb.Role) (bool, error) {
					seen[i] = stackHas("role_test.updateFromCaller")
					if i == 3 {
						panic("boom 3")
					}
					return role.AddPermissions(fmt.Sprintf("svc.things.verb%d", i))(r)
				})
			})
		}
		wg.Wait()
	})
	for i := range n {
		if !seen[i] {
			t.Errorf("caller %d: its Change's stack does not show its caller", i)
		}
		if want := any(nil); i == 3 {
			if panicked[i] != "boom 3" {
				t.Errorf("caller 3 recovered %v, want its Change's panic", panicked[i])
			}
		} else if panicked[i] != want {
			t.Errorf("caller %d recovered %v", i, panicked[i])
		}
	}
}

// updateFromCaller is the caller whose frame the Change looks for.
//
//go:noinline
func updateFromCaller(ctx context.Context, u *role.Updater, i int, c role.Change) {
	_, _ = u.Update(ctx, roleName, c)
}

// stackHas reports whether the calling goroutine's stack holds a frame of
// the function fn (package-qualified, as runtime.Frame.Function ends).
func stackHas(fn string) bool {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// refusingClient refuses an UpdateRole that carries the permission bad
// (INVALID_ARGUMENT, as IAM refuses a permission a custom role cannot
// hold), and holds the first GetRole until gate is closed.
type refusingClient struct {
	role.Client
	bad   string
	gate  chan struct{}
	reads atomic.Int32
}

func (c *refusingClient) GetRole(ctx context.Context, req *adminpb.GetRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	if c.reads.Add(1) == 1 {
		<-c.gate
	}
	return c.Client.GetRole(ctx, req, opts...)
}

func (c *refusingClient) UpdateRole(ctx context.Context, req *adminpb.UpdateRoleRequest, opts ...gax.CallOption) (*adminpb.Role, error) {
	if slices.Contains(req.GetRole().GetIncludedPermissions(), c.bad) {
		return nil, status.Errorf(grpccodes.InvalidArgument, "Permission %s is not valid.", c.bad)
	}
	return c.Client.UpdateRole(ctx, req, opts...)
}

// TestRefusedBatchIsSplit: a coalesced write that IAM refuses
// INVALID_ARGUMENT is split: each caller's change is tried alone, so only
// the caller that asked for the permission fails; the others' changes land.
func TestRefusedBatchIsSplit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	c := &refusingClient{Client: e.admin, bad: "svc.things.bad", gate: make(chan struct{})}
	u, err := role.NewUpdater(c, e.r)
	if err != nil {
		t.Fatal(err)
	}
	update := func(perm string) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := u.Update(context.Background(), roleName, role.AddPermissions(perm))
			ch <- err
		}()
		return ch
	}
	first := update("svc.things.first")
	for c.reads.Load() != 1 {
		runtime.Gosched()
	}
	var chs []chan error
	for i, p := range []string{"svc.things.a", c.bad, "svc.things.c"} {
		chs = append(chs, update(p))
		for role.Pending(u, roleName) != i+1 {
			runtime.Gosched()
		}
	}
	close(c.gate)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	errA, errBad, errC := <-chs[0], <-chs[1], <-chs[2]
	if errA != nil || errC != nil || status.Code(errBad) != grpccodes.InvalidArgument {
		t.Fatalf("a: %v, bad: %v, c: %v; want only the bad one refused", errA, errBad, errC)
	}
	got := e.srv.CustomRole(roleName).GetIncludedPermissions()
	if !slices.Contains(got, "svc.things.a") || !slices.Contains(got, "svc.things.c") || slices.Contains(got, c.bad) {
		t.Fatalf("the role holds %v", got)
	}
}
