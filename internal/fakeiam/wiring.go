package fakeiam

import (
	"context"
	"errors"
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

// ErrClosed is returned by StartBufconn, Serve and Dial once Close has run.
var ErrClosed = errors.New("fakeiam: server closed")

// StartBufconn starts serving over an in-memory bufconn listener, the one that
// ClientOptions and Dial connect to. Calling it again is a no-op. It fails only
// with ErrClosed after Close.
func (s *Server) StartBufconn() error {
	_, err := s.bufconn()
	return err
}

// bufconn returns the in-memory listener, starting it on first use.
func (s *Server) bufconn() (*bufconn.Listener, error) {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.bufLis == nil {
		s.bufLis = bufconn.Listen(s.cfg.bufferSize)
		lis := s.bufLis
		s.serveWG.Add(1)
		go func() {
			defer s.serveWG.Done()
			_ = s.grpc.Serve(lis) // ends when Close stops the server
		}()
	}
	return s.bufLis, nil
}

// Serve serves the fake on lis (a TCP listener, say, for a fake-server
// command) and blocks until Close is called or lis fails. It returns nil
// after Close, ErrClosed if Close ran before, and the listener's error
// otherwise. It may be used alongside the in-memory listener.
func (s *Server) Serve(lis net.Listener) error {
	s.lifeMu.Lock()
	if s.closed {
		s.lifeMu.Unlock()
		_ = lis.Close()
		return ErrClosed
	}
	s.addr = lis.Addr()
	s.serveWG.Add(1)
	s.lifeMu.Unlock()
	defer s.serveWG.Done()
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Addr returns the address of the listener last passed to Serve, or "" when
// Serve has not been called.
func (s *Server) Addr() string {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.addr == nil {
		return ""
	}
	return s.addr.String()
}

// Close stops the server at once: listeners are closed, open connections are
// dropped and calls in flight are cancelled (their waits for injected latency
// end with their contexts). It returns when every goroutine the fake started
// has ended. Close may be called more than once. Clients made from
// ClientOptions or Dial still have to be closed by their owners.
func (s *Server) Close() {
	s.lifeMu.Lock()
	if s.closed {
		s.lifeMu.Unlock()
		return
	}
	s.closed = true
	s.lifeMu.Unlock()
	s.grpc.Stop()
	s.serveWG.Wait()
}

// ClientOptions returns the options that point any cloud.google.com/go client
// (admin.NewIamClient, iam/apiv1 NewIamPolicyClient, resourcemanager/apiv3
// NewProjectsClient, ...) at the in-process server: its endpoint, no
// authentication, insecure transport credentials and a dialer to the
// in-memory listener, which is started if it is not yet. Append your own
// options, such as option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(x)).
// After Close the options still build a client, whose calls fail UNAVAILABLE.
func (s *Server) ClientOptions() []option.ClientOption {
	dial := s.contextDialer()
	return []option.ClientOption{
		option.WithEndpoint(bufTarget),
		option.WithoutAuthentication(),
		option.WithTelemetryDisabled(),
		option.WithGRPCDialOption(grpc.WithContextDialer(dial)),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// Dial returns a raw client connection to the in-process server, for generated
// stubs such as iampb.NewIAMPolicyClient(conn). extra dial options are applied
// after the fake's own. The caller closes the connection. ctx is only checked
// for being done already: the connection is made lazily, as grpc.NewClient
// does.
func (s *Server) Dial(ctx context.Context, extra ...grpc.DialOption) (*grpc.ClientConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := s.bufconn(); err != nil {
		return nil, err
	}
	opts := append([]grpc.DialOption{
		grpc.WithContextDialer(s.contextDialer()),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, extra...)
	return grpc.NewClient(bufTarget, opts...)
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
