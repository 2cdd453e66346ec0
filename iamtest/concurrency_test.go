package iamtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// addMember runs a read-modify-write that grants roles/viewer to member on
// res, rerunning it on ABORTED and on injected UNAVAILABLE (a lost answer may
// have committed: the rerun then finds the member already there).
func addMember(ctx context.Context, c iampb.IAMPolicyClient, res, member string) error {
	for attempt := 0; attempt < 10000; attempt++ {
		p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if status.Code(err) == codes.Unavailable {
			continue
		}
		if err != nil {
			return err
		}
		var viewers *iampb.Binding
		for _, b := range p.Bindings {
			if b.Role == "roles/viewer" {
				viewers = b
			}
		}
		if viewers == nil {
			viewers = &iampb.Binding{Role: "roles/viewer"}
			p.Bindings = append(p.Bindings, viewers)
		}
		if slices.Contains(viewers.Members, member) {
			return nil
		}
		viewers.Members = append(viewers.Members, member)
		_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: p})
		switch status.Code(err) {
		case codes.OK:
			return nil
		case codes.Aborted, codes.Unavailable:
			continue
		default:
			return err
		}
	}
	return fmt.Errorf("%s: too many attempts", member)
}

// TestConcurrentReadModifyWrite hammers one policy from many goroutines with
// faults on, while other goroutines create accounts, change fault settings
// and read the log. Run with -race.
func TestConcurrentReadModifyWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, WithSeed(3))
	f.srv.SetFailureRate(AnyMethod, 0.1, codes.Unavailable)
	f.srv.SetLostAnswerRate(MethodSetIamPolicy, 0.2)
	const workers, each = 12, 4
	const res = "projects/busy"

	var wg sync.WaitGroup
	errs := make(chan error, workers*each+workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := addMember(ctx, f.policy, res, fmt.Sprintf("user:w%d-%d@example.com", w, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	stop := make(chan struct{})
	var side sync.WaitGroup
	side.Go(func() { // accounts and their keys, concurrently
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			sa, err := f.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{Name: "projects/busy", AccountId: fmt.Sprintf("robot-%04d", i)})
			if err == nil {
				_, _ = f.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: sa.Name})
			}
		}
	})
	side.Go(func() { // settings and helpers, concurrently
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.srv.SetLatency(MethodGetRole, time.Duration(i%2)*time.Nanosecond)
			f.srv.SetRetryInfo(time.Duration(i % 3))
			f.srv.SetPropagationDelay(0)
			_ = f.srv.Calls()
			_ = f.srv.CountCalls(MethodSetIamPolicy)
			_ = f.srv.Policy(res)
			f.clock.Advance(time.Millisecond)
			time.Sleep(100 * time.Microsecond)
		}
	})
	wg.Wait()
	close(stop)
	side.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	f.srv.ResetFaults()
	p := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
	if len(p.Bindings) != 1 || len(p.Bindings[0].Members) != workers*each {
		t.Fatalf("policy has %d bindings, %d members; want 1, %d", len(p.Bindings), len(p.Bindings[0].Members), workers*each)
	}
	if !proto.Equal(p, f.srv.Policy(res)) {
		t.Fatal("helper and RPC disagree")
	}
	injected := 0
	for _, c := range f.srv.Calls() {
		if c.Injected {
			injected++
		}
	}
	if injected == 0 {
		t.Fatal("no fault was injected")
	}
}
