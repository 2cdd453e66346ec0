package iamtest_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// Every control given a value it cannot honour panics at once with a
// message that names the control (a bug in the test, never a silent
// default), and leaves the server as it was.
func TestControlsRefuseBadValues(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	bad := []struct {
		control string
		f       func()
	}{
		{"FailNext", func() { srv.FailNext("GetIamPolicy", 1, codes.Unavailable) }},
		{"FailNext", func() { srv.FailNext(iamtest.MethodGetIamPolicy, -1, codes.Unavailable) }},
		{"FailNext", func() { srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.OK) }},
		{"FailNext", func() { srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Code(17)) }},
		{"FailNext", func() { srv.FailNext("", 1, codes.Unavailable) }},
		{"FailNextWith", func() { srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, nil) }},
		{"FailNextWith", func() { srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, errors.New("plain")) }},
		{"FailNextWith", func() { srv.FailNextWith(iamtest.MethodGetIamPolicy, 1, status.Error(codes.OK, "")) }},
		{"FailNextWith", func() { srv.FailNextWith(iamtest.MethodGetIamPolicy, -1, status.Error(codes.Internal, "x")) }},
		{"SetFailureRate", func() { srv.SetFailureRate(iamtest.MethodGetIamPolicy, math.NaN()) }},
		{"SetFailureRate", func() { srv.SetFailureRate(iamtest.MethodGetIamPolicy, -0.1) }},
		{"SetFailureRate", func() { srv.SetFailureRate(iamtest.MethodGetIamPolicy, 1.0001) }},
		{"SetFailureRate", func() { srv.SetFailureRate(iamtest.MethodGetIamPolicy, math.Inf(1)) }},
		{"SetFailureRate", func() { srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.5, codes.Unavailable, codes.OK) }},
		{"SetFailureRate", func() { srv.SetFailureRate("nope", 0.5) }},
		{"LoseNextAnswers", func() { srv.LoseNextAnswers(iamtest.MethodSetIamPolicy, -1) }},
		{"LoseNextAnswers", func() { srv.LoseNextAnswers("x", 1) }},
		{"SetLostAnswerRate", func() { srv.SetLostAnswerRate(iamtest.MethodSetIamPolicy, math.NaN()) }},
		{"SetLostAnswerRate", func() { srv.SetLostAnswerRate(iamtest.MethodSetIamPolicy, 2) }},
		{"SetLatency", func() { srv.SetLatency(iamtest.MethodGetIamPolicy, -time.Nanosecond) }},
		{"SetLatency", func() { srv.SetLatency("x", time.Second) }},
		{"SetRetryInfo", func() { srv.SetRetryInfo(-time.Second) }},
		{"ConcurrentWriteNext", func() { srv.ConcurrentWriteNext(iamtest.MethodGetIamPolicy, 1) }},
		{"ConcurrentWriteNext", func() { srv.ConcurrentWriteNext(iamtest.MethodSetIamPolicy, -1) }},
		{"SetStaleEtagCode", func() { srv.SetStaleEtagCode(codes.OK) }},
		{"SetStaleEtagCode", func() { srv.SetStaleEtagCode(codes.Code(99)) }},
		{"SetOutage", func() { srv.SetOutage(iamtest.MethodGetIamPolicy, codes.OK) }},
		{"SetOutage", func() { srv.SetOutage("x", codes.Unavailable) }},
		{"ClearOutage", func() { srv.ClearOutage("x") }},
		{"SetPropagationDelay", func() { srv.SetPropagationDelay(-1) }},
		{"SetPropagationReads", func() { srv.SetPropagationReads(-1) }},
		{"SetPropagationCodes", func() { srv.SetPropagationCodes(codes.Unavailable) }},
		{"SetStaleReads", func() { srv.SetStaleReads(-1) }},
		{"SetConditionalRead", func() { srv.SetConditionalRead(iamtest.ConditionalRead(99)) }},
		{"SeedPolicy", func() { srv.SeedPolicy("", &iampb.Policy{}) }},
		{"SeedPolicy", func() {
			srv.SeedPolicy("projects/p", &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"bogus"}}}})
		}},
		{"SeedServiceAccount", func() { srv.SeedServiceAccount("p", "x") }},
		{"RegisterProject", func() { srv.RegisterProject("A", 1) }},
		{"RegisterProject", func() { srv.RegisterProject("good-project", 0) }},
		{"InviteOwner", func() { srv.InviteOwner("p", "group:g@example.com") }},
		{"AddRoles", func() { srv.AddRoles("viewer") }},
	}
	for i, b := range bad {
		msg := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			b.f()
			return "<no panic>"
		}()
		if !strings.HasPrefix(msg, "iamtest: "+b.control) {
			t.Errorf("case %d (%s): panicked with %q, want a message that starts by naming the control", i, b.control, msg)
		}
	}
	// Nothing was set by a refused control: a read goes through.
	c := iampb.NewIAMPolicyClient(srv.Conn())
	if _, err := c.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"}); err != nil {
		t.Fatalf("a read after the refused controls: %v", err)
	}
}

// Controls used from many goroutines while calls run (race detector), and
// each control takes effect for the calls that arrive after it returns.
func TestControlsConcurrentWithCalls(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := iampb.NewIAMPolicyClient(srv.Conn())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: fmt.Sprintf("projects/p%d", i)})
				_, _ = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: fmt.Sprintf("projects/p%d", i), Policy: &iampb.Policy{}})
			}
		}()
	}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50 && ctx.Err() == nil; j++ {
				srv.FailNext(iamtest.AnyMethod, 1, codes.Unavailable)
				srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.1)
				srv.SetLostAnswerRate(iamtest.MethodSetIamPolicy, 0.1)
				srv.ConcurrentWriteNext(iamtest.AnyMethod, 1)
				srv.SetRetryInfo(time.Millisecond)
				srv.SetOutage(iamtest.MethodTestIamPermissions, codes.Unavailable)
				srv.ClearOutage(iamtest.MethodTestIamPermissions)
				srv.SetSeed(int64(i*100 + j))
				srv.SetStaleEtagCode(codes.FailedPrecondition)
				_ = srv.Calls()
				_ = srv.CountCalls(iamtest.AnyMethod)
				srv.ResetCalls()
				srv.ResetFaults()
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	wg.Wait()
	// After the last control returned: each takes effect for the next call.
	srv.ResetFaults()
	// (TestIamPermissions: a GetIamPolicy the callers sent before they
	// stopped may still reach the server, and would use up a script.)
	srv.FailNext(iamtest.MethodTestIamPermissions, 1, codes.Internal)
	if _, err := c.TestIamPermissions(context.Background(), &iampb.TestIamPermissionsRequest{Resource: "projects/q", Permissions: []string{"iam.roles.get"}}); status.Code(err) != codes.Internal {
		t.Fatalf("the call after FailNext: %v, want INTERNAL", err)
	}
	srv.SetOutage(iamtest.MethodGetIamPolicy, codes.Unavailable)
	if _, err := c.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/q"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("the call after SetOutage: %v, want UNAVAILABLE", err)
	}
	srv.ClearOutage(iamtest.MethodGetIamPolicy)
	if _, err := c.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/q"}); err != nil {
		t.Fatalf("the call after ClearOutage: %v", err)
	}
}

// ResetFaults removes every fault setting its doc lists, and keeps what it
// says it keeps (propagation settings, call log, stored data).
func TestResetFaultsResetsExactlyWhatItSays(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := iampb.NewIAMPolicyClient(srv.Conn())
	bg := context.Background()
	seeded := srv.SeedPolicy("projects/kept", &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}}})
	if _, err := c.GetIamPolicy(bg, &iampb.GetIamPolicyRequest{Resource: "projects/kept"}); err != nil {
		t.Fatal(err)
	}
	srv.FailNext(iamtest.AnyMethod, 5, codes.Unavailable)
	srv.FailNextWith(iamtest.MethodGetIamPolicy, 5, status.Error(codes.Internal, "x"))
	srv.SetFailureRate(iamtest.AnyMethod, 1)
	srv.LoseNextAnswers(iamtest.AnyMethod, 5)
	srv.SetLostAnswerRate(iamtest.AnyMethod, 1)
	srv.SetLatency(iamtest.AnyMethod, time.Hour)
	srv.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	srv.SetRetryInfo(time.Second)
	srv.ConcurrentWriteNext(iamtest.AnyMethod, 5)
	srv.SetStaleEtagCode(codes.FailedPrecondition)
	srv.SetPropagationReads(3)
	srv.ResetFaults()
	if n := srv.CountCalls(iamtest.MethodGetIamPolicy); n != 1 {
		t.Fatalf("the call log after ResetFaults: %d reads, want the 1 made before", n)
	}
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/kept"})
	if err != nil {
		t.Fatalf("a read after ResetFaults: %v", err)
	}
	if string(p.Etag) != string(seeded.Etag) {
		t.Fatalf("the stored policy changed: etag %q, want %q", p.Etag, seeded.Etag)
	}
	// A write with the read etag: no concurrent write, no lost answer.
	p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/editor", Members: []string{"user:b@example.com"}})
	if _, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/kept", Policy: p}); err != nil {
		t.Fatalf("a write after ResetFaults: %v", err)
	}
	// A stale etag is answered ABORTED again.
	if _, err := c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/kept", Policy: p}); status.Code(err) != codes.Aborted {
		t.Fatalf("a stale write after ResetFaults: %v, want ABORTED", err)
	}
}

// Close while calls are in flight (held at a latency on the wall clock):
// every call ends with an error at once, Close returns, and Serve and
// ServeREST after Close are refused with an error and close their listener.
func TestCloseWithCallsInFlight(t *testing.T) {
	t.Parallel()
	srv, err := iamtest.New()
	if err != nil {
		t.Fatal(err)
	}
	srv.SetLatency(iamtest.AnyMethod, time.Hour)
	c := iampb.NewIAMPolicyClient(srv.Conn())
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			_, err := c.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"})
			errs <- err
		}()
	}
	// The calls are logged only once their latency ends: give them a short
	// real while to reach the handler (a call that has not is refused by
	// Close all the same).
	time.Sleep(100 * time.Millisecond)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	for range cap(errs) {
		select {
		case err := <-errs:
			if err == nil {
				t.Error("a call in flight at Close succeeded")
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a call in flight at Close hangs")
		}
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close hangs")
	}
	srv.Close() // twice: documented to be fine
	for name, serve := range map[string]func(net.Listener) error{"Serve": srv.Serve, "ServeREST": srv.ServeREST} {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- serve(lis) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "closed") {
				t.Errorf("%s after Close: %v, want an error naming it and saying the server is closed", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s after Close blocks", name)
		}
		if _, err := lis.Accept(); err == nil {
			t.Errorf("%s after Close left its listener open", name)
		}
	}
}
