package iamtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// Server is a running fake IAM server. Its methods are safe for concurrent
// use.
type Server struct {
	fake     *fakeiam.Server
	conn     *grpc.ClientConn
	restFace restFace // the REST face, started on first use (rest.go)
	// restServers are those of ServeREST (serverest.go).
	restServers restServers

	closeOnce sync.Once
}

// NewServer starts a fake IAM server for the test t, in-process over an
// in-memory listener, and registers its Close with t.Cleanup: when the test
// ends the server stops, and every goroutine it started has ended. It fails t
// at once if an option is invalid.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// New starts a fake IAM server, like NewServer, for code that has no
// testing.TB at hand (a TestMain sharing one fake among tests, an Example).
// The caller must call Close. It returns an error naming the first invalid
// option.
func New(opts ...Option) (*Server, error) {
	cfg := config{}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("iamtest: option %d is nil", i)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Server{fake: fakeiam.New(cfg.fakeOptions()...)}
	if err := s.fake.StartBufconn(); err != nil {
		s.fake.Close()
		return nil, fmt.Errorf("iamtest: %w", err)
	}
	conn, err := s.fake.Dial(context.Background())
	if err != nil {
		s.fake.Close()
		return nil, fmt.Errorf("iamtest: %w", err)
	}
	s.conn = conn
	return s, nil
}

// Close stops the server at once: open connections are dropped, calls in
// flight fail and every goroutine the server started has ended when Close
// returns. Conn is closed too; clients made from ClientOptions must be
// closed by their owners. Close may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		_ = s.conn.Close()
		s.fake.Close()
		s.closeREST()
		s.closeRESTServers()
	})
}

// ClientOptions returns the options that point a cloud.google.com/go gRPC
// client (admin.NewIamClient, iam/apiv1's NewIamPolicyClient,
// resourcemanager/apiv3's NewProjectsClient, NewFoldersClient,
// NewOrganizationsClient, iam/apiv2's NewPoliciesClient, ...) at the fake: its in-memory endpoint, no
// authentication, no transport security, no telemetry. Append options of
// your own, such as option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(x)).
// Once the server is closed, such clients' calls fail UNAVAILABLE.
func (s *Server) ClientOptions() []option.ClientOption {
	return s.fake.ClientOptions()
}

// Conn returns a client connection to the fake, for generated stubs such as
// iampb.NewIAMPolicyClient(srv.Conn()). It is shared, owned by the server and
// closed by Close: do not close it yourself. Dial options of your own (an
// interceptor under test) need a client made from ClientOptions instead.
func (s *Server) Conn() *grpc.ClientConn { return s.conn }

// Dial returns a new client connection to the fake, with the dial options
// opts (an interceptor under test, say) on top of the fake's own: its
// in-memory dialer and no transport security. Without opts it is a
// connection like Conn's, but the caller's: close it when done (Close drops
// it too, and its calls then fail UNAVAILABLE). It returns ctx's error if
// ctx has ended, and an error if the server is closed.
func (s *Server) Dial(ctx context.Context, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	conn, err := s.fake.Dial(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("iamtest: %w", err)
	}
	return conn, nil
}
