package iamtest

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/internal/vclock"
)

// newManualClock is the clock a test moves by hand (Advance): the module's
// one virtual clock, at a fixed start.
func newManualClock() *vclock.Clock {
	return vclock.At(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
}

// fixture is a started fake with raw stubs on one connection.
type fixture struct {
	srv      *Server
	clock    *vclock.Clock
	conn     *grpc.ClientConn
	policy   iampb.IAMPolicyClient
	admin    adminpb.IAMClient
	projects resourcemanagerpb.ProjectsClient
	folders  resourcemanagerpb.FoldersClient
	orgs     resourcemanagerpb.OrganizationsClient
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	t.Helper()
	clock := newManualClock()
	srv, err := New(append([]Option{WithClock(testClock{now: clock.Now})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := srv.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Close()
	})
	return &fixture{
		srv:      srv,
		clock:    clock,
		conn:     conn,
		policy:   iampb.NewIAMPolicyClient(conn),
		admin:    adminpb.NewIAMClient(conn),
		projects: resourcemanagerpb.NewProjectsClient(conn),
		folders:  resourcemanagerpb.NewFoldersClient(conn),
		orgs:     resourcemanagerpb.NewOrganizationsClient(conn),
	}
}

// wantCode fails the test unless err has code want (and, when msg is not
// empty, exactly that message).
func wantCode(t *testing.T, err error, want codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != want {
		t.Fatalf("got %v (%v), want code %v", st.Code(), err, want)
	}
	if msg != "" && st.Message() != msg {
		t.Fatalf("got message %q, want %q", st.Message(), msg)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func maskOf(paths ...string) *fieldmaskpb.FieldMask { return &fieldmaskpb.FieldMask{Paths: paths} }

// testClock is a Clock of a test's own: Now from now, Sleep from sleep (a
// real timer when nil).
type testClock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

func (c testClock) Now() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

func (c testClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.sleep == nil {
		return realSleep(ctx, d)
	}
	return c.sleep(ctx, d)
}

// startTest starts a fake for t, stopped when t ends.
func startTest(t *testing.T, opts ...Option) *Server {
	t.Helper()
	return NewServer(t, opts...)
}

// newRaw is New for a test that closes the server itself.
func newRaw(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Options of the internal tests: a setting in force from the start.

func withPropagationReads(n int) Option {
	return func(c *config) error { c.propReads = n; return nil }
}

func withPropagationDelay(d time.Duration) Option {
	return func(c *config) error { c.propDelay = d; return nil }
}

func withPropagationCodes(cs ...codes.Code) Option {
	return func(c *config) error { c.fid.propCodes = cs; return nil }
}

func withStaleReads(d time.Duration) Option {
	return func(c *config) error { c.fid.staleReads = d; return nil }
}

func withStaleEtagCode(code codes.Code) Option {
	return func(c *config) error { c.staleCode = code; return nil }
}
