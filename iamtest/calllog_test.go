package iamtest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

func TestCallLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	t0 := f.clock.Now()
	f.get(t)
	f.clock.Advance(time.Second)
	f.srv.FailNext(MethodGetIamPolicy, 1, codes.Unavailable)
	ctx := metadata.AppendToOutgoingContext(context.Background(), attemptHeader, "2")
	_, _ = f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/f"})
	ctx = metadata.AppendToOutgoingContext(context.Background(), attemptHeader, "3")
	_, _ = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/f", Policy: &iampb.Policy{}})

	want := []Call{
		{Method: MethodGetIamPolicy, Resource: "projects/f", Time: t0, Code: codes.OK, Applied: true},
		{Method: MethodGetIamPolicy, Resource: "projects/f", Time: t0.Add(time.Second), Code: codes.Unavailable, Attempt: "2", Injected: true},
		{Method: MethodSetIamPolicy, Resource: "projects/f", Time: t0.Add(time.Second), Code: codes.OK, Attempt: "3", Applied: true},
	}
	got := f.srv.Calls()
	if len(got) != len(want) {
		t.Fatalf("log %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	got[0].Method = "changed"
	if f.srv.Calls()[0].Method != MethodGetIamPolicy {
		t.Fatal("Calls did not return a copy")
	}
	if f.srv.CountCalls(MethodGetIamPolicy) != 2 || f.srv.CountCalls(MethodSetIamPolicy) != 1 ||
		f.srv.CountCalls(AnyMethod) != 3 || f.srv.CountCalls(MethodGetRole) != 0 {
		t.Fatal("CountCalls disagrees with the log")
	}
	f.srv.ResetCalls()
	if len(f.srv.Calls()) != 0 || f.srv.CountCalls(AnyMethod) != 0 {
		t.Fatal("ResetCalls left calls")
	}
}
