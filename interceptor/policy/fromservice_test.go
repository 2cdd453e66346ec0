package policy_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// recordingConn records the method and routing header of each call.
type recordingConn struct {
	grpc.ClientConnInterface
	mu      sync.Mutex
	methods []string
	routing []string
}

func (c *recordingConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	md, _ := metadata.FromOutgoingContext(ctx)
	c.mu.Lock()
	c.methods = append(c.methods, method)
	c.routing = append(c.routing, md.Get("x-goog-request-params")...)
	c.mu.Unlock()
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// TestFromService: the IAM methods of the service named, with the routing
// header GAPIC clients send; a service the server does not serve answers
// UNIMPLEMENTED.
func TestFromService(t *testing.T) {
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	conn := &recordingConn{ClientConnInterface: srv.Conn()}
	r, err := interceptor.New() // no failure: nothing waits
	if err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(policy.FromService(conn, "google.cloud.resourcemanager.v3.Projects"), r)
	if err != nil {
		t.Fatal(err)
	}
	const project = "projects/p"
	if _, err := u.Update(ctx, project, policy.AddBinding("roles/viewer", "domain:example.com")); err != nil {
		t.Fatal(err)
	}
	conn.mu.Lock()
	want := []string{"/google.cloud.resourcemanager.v3.Projects/GetIamPolicy", "/google.cloud.resourcemanager.v3.Projects/SetIamPolicy"}
	if fmt.Sprint(conn.methods) != fmt.Sprint(want) || len(conn.routing) != 2 || conn.routing[0] != "resource="+url.QueryEscape(project) {
		t.Errorf("methods %q, routing headers %q", conn.methods, conn.routing)
	}
	conn.mu.Unlock()
	if got := srv.Policy(project).GetBindings(); len(got) != 1 || got[0].GetMembers()[0] != "domain:example.com" {
		t.Errorf("stored %v", got)
	}

	u, err = policy.NewUpdater(policy.FromService(srv.Conn(), "google.example.v1.Nothing"), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Update(ctx, project, policy.AddBinding("roles/viewer", "domain:example.com")); status.Code(err) != codes.Unimplemented {
		t.Errorf("an unknown service: %v, want UNIMPLEMENTED", err)
	}
	if policy.FromService(nil, "google.iam.v1.IAMPolicy") != nil {
		t.Error("a nil conn gave a Client")
	}
}

// FromService adapts a raw gRPC connection to the IAM methods of a service
// other than google.iam.v1.IAMPolicy: here Resource Manager's Projects.
func ExampleFromService() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromService(srv.Conn(), "google.cloud.resourcemanager.v3.Projects"), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := u.Update(ctx, "projects/my-project", policy.AddBinding("roles/viewer", "group:ops@example.com"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Bindings[0].Role, p.Bindings[0].Members)
	// Output:
	// roles/viewer [group:ops@example.com]
}
