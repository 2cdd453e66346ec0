package iamtest

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// bufTarget is the gRPC target of the in-memory listener. The passthrough
// scheme hands "bufnet" unresolved to the context dialer, whatever the
// default resolver of the dialing code is.
const bufTarget = "passthrough:///bufnet"

// bufferSize is the in-memory listener's buffer.
const bufferSize = 1 << 20

// errClosed is what Dial answers once Close has run.
var errClosed = errors.New("iamtest: the server is closed")

// isClosed reports whether Close has run.
func (s *Server) isClosed() bool {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	return s.closed
}

// bufconn returns the in-memory listener, starting it on first use.
func (s *Server) bufconn() (*bufconn.Listener, error) {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.bufLis == nil {
		s.bufLis = bufconn.Listen(bufferSize)
		lis := s.bufLis
		s.serveWG.Add(1)
		go func() {
			defer s.serveWG.Done()
			_ = s.grpc.Serve(lis) // ends when Close stops the server
		}()
	}
	return s.bufLis, nil
}

// Serve serves the fake on lis as well, such as a TCP listener that programs
// in other processes (or other languages) dial, and blocks until Close stops
// the server or lis fails. It returns nil once Close has stopped it, an error
// wrapping net.ErrClosed if the server was closed before Serve was called
// (lis is then closed), and the listener's error otherwise. The in-memory listener of ClientOptions and
// Conn keeps serving beside it; the controls and the call log cover calls
// from both. Serve may be called for several listeners, each on its own
// goroutine.
func (s *Server) Serve(lis net.Listener) error {
	s.lifeMu.Lock()
	if s.closed {
		s.lifeMu.Unlock()
		_ = lis.Close()
		return fmt.Errorf("iamtest: Serve: the server is closed: %w", net.ErrClosed)
	}
	s.serveWG.Add(1)
	s.lifeMu.Unlock()
	defer s.serveWG.Done()
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// ClientOptions returns the options that point a cloud.google.com/go gRPC
// client (admin.NewIamClient, iam/apiv1's NewIamPolicyClient,
// resourcemanager/apiv3's NewProjectsClient, NewFoldersClient,
// NewOrganizationsClient, iam/apiv2's NewPoliciesClient, ...) at the fake: its in-memory endpoint, no
// authentication, no transport security, no telemetry. Append options of
// your own, such as option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(x)).
// Once the server is closed, such clients' calls fail UNAVAILABLE.
func (s *Server) ClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(bufTarget),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
		option.WithGRPCDialOption(grpc.WithContextDialer(s.contextDialer())),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// Dial returns a new client connection to the fake, with the dial options
// opts (an interceptor under test, say) on top of the fake's own: its
// in-memory dialer and no transport security. Without opts it is a
// connection like Conn's, but the caller's: close it when done (Close drops
// it too, and its calls then fail UNAVAILABLE). It returns ctx's error if
// ctx has ended, and an error if the server is closed.
func (s *Server) Dial(ctx context.Context, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := s.bufconn(); err != nil {
		return nil, err
	}
	all := append([]grpc.DialOption{
		grpc.WithContextDialer(s.contextDialer()),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, opts...)
	return grpc.NewClient(bufTarget, all...)
}

// contextDialer dials the in-memory listener, starting it if needed.
func (s *Server) contextDialer() func(context.Context, string) (net.Conn, error) {
	_, _ = s.bufconn() // start early; an error shows at dial time
	return func(ctx context.Context, _ string) (net.Conn, error) {
		lis, err := s.bufconn()
		if err != nil {
			return nil, err
		}
		return lis.DialContext(ctx)
	}
}
