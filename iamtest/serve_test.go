package iamtest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/iamretry/iamretry/iamtest"
)

// TestServeOnTCP serves the fake on a loopback TCP listener: a client that
// dials the port reaches the same store and call log as the in-memory one,
// and Serve returns nil once Close stops it.
func TestServeOnTCP(t *testing.T) {
	t.Parallel()
	srv, err := iamtest.New()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	p := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}}
	if _, err := iampb.NewIAMPolicyClient(conn).SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: p}); err != nil {
		t.Fatal(err)
	}
	got, err := iampb.NewIAMPolicyClient(srv.Conn()).GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/viewer" {
		t.Errorf("the in-memory listener read %v, want the binding written over TCP", got.Bindings)
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 2 {
		t.Errorf("call log holds %d calls, want 2 (one per listener)", n)
	}

	srv.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve after Close returned %v, want nil", err)
	}
	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(lis2); err == nil {
		t.Error("Serve on a closed server returned nil, want an error")
	}
}

// TestServeRESTOnTCP serves the fake's REST face on a loopback TCP listener:
// a JSON setIamPolicy sent there is read back over the in-memory gRPC face
// (one store, one call log), an error comes as Google's JSON error, and
// ServeREST returns nil once Close stops it, an error after.
func TestServeRESTOnTCP(t *testing.T) {
	t.Parallel()
	srv, err := iamtest.New()
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeREST(lis) }()
	base := "http://" + lis.Addr().String() + "/"
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()

	body := `{"policy": {"bindings": [{"role": "roles/viewer", "members": ["user:alice@example.com"]}]}}`
	resp, err := hc.Post(base+"v1/projects/p:setIamPolicy", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setIamPolicy over REST: %s %s", resp.Status, b)
	}
	got, err := iampb.NewIAMPolicyClient(srv.Conn()).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/viewer" {
		t.Errorf("the gRPC face read %v, want the binding written over REST", got.Bindings)
	}

	srv.SetFailureRate(iamtest.AnyMethod, 1, grpccodes.Unavailable)
	resp, err = hc.Post(base+"v1/projects/p:getIamPolicy", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"UNAVAILABLE"`) {
		t.Errorf("an injected fault over REST answered %s %s, want 503 with status UNAVAILABLE", resp.Status, b)
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 3 {
		t.Errorf("call log holds %d calls, want 3 (two over REST, one over gRPC)", n)
	}

	srv.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeREST after Close returned %v, want nil", err)
	}
	lis2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.ServeREST(lis2); !errors.Is(err, net.ErrClosed) {
		t.Errorf("ServeREST on a closed server returned %v, want an error wrapping net.ErrClosed", err)
	}
	if _, err := net.Dial("tcp", lis2.Addr().String()); err == nil {
		t.Error("ServeREST on a closed server left its listener open")
	}
}

// TestRESTHandlerAfterClose: the REST face served by a server of the
// caller's answers 503 once the fake is closed, as its gRPC face does.
func TestRESTHandlerAfterClose(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	h := srv.RESTHandler()
	srv.Close()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/projects/p:getIamPolicy", strings.NewReader(`{}`)))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"UNAVAILABLE"`) {
		t.Fatalf("after Close: %d %s, want 503 UNAVAILABLE", rec.Code, rec.Body.String())
	}
}
