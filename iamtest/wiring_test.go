package iamtest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func TestServeTCP(t *testing.T) {
	t.Parallel()
	srv := newRaw(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := iampb.NewIAMPolicyClient(conn).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/tcp"}); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve after Close = %v", err)
	}
}

func TestCloseLifecycle(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	srv := newRaw(t, WithClock(testClock{sleep: func(ctx context.Context, d time.Duration) error {
		entered <- struct{}{}
		return realSleep(ctx, d)
	}}))

	// Close cancels a call waiting in injected latency (real timers here).
	srv.SetLatency(AnyMethod, time.Hour)
	conn, err := srv.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		_, err := iampb.NewIAMPolicyClient(conn).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/slow"})
		done <- err
	}()
	<-entered
	srv.Close()
	srv.Close() // idempotent
	if err := <-done; status.Code(err) == codes.OK {
		t.Fatal("a call survived Close")
	}

	if _, err := srv.Dial(context.Background()); !errors.Is(err, errClosed) {
		t.Fatalf("Dial after Close = %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(lis); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve after Close = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := newRaw(t)
	defer other.Close()
	if _, err := other.Dial(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with a done context = %v", err)
	}
}
