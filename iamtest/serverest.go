package iamtest

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// restServers are the HTTP servers ServeREST started, stopped by Close.
type restServers struct {
	mu      sync.Mutex
	closed  bool
	running []*restServer
}

// restServer is one ServeREST call: its HTTP server, a channel closed when
// its Serve has returned, and its open connections.
type restServer struct {
	hs     *http.Server
	served chan struct{}
	conns  sync.WaitGroup
}

// ServeREST serves the fake's REST face (the same handler as RESTEndpoint:
// the same store, faults and call log as the gRPC face) on lis as well,
// such as a TCP listener that REST clients in other processes reach at
// "http://" + lis.Addr().String() + "/". It blocks until Close stops the
// server or lis fails, like Serve: it returns nil once Close has stopped it,
// an error wrapping net.ErrClosed if the server was closed before ServeREST
// was called (lis is then closed), and the listener's error otherwise. When Close returns, every
// connection ServeREST accepted is closed and its goroutine has ended.
// ServeREST may be called for several listeners, each on its own goroutine.
func (s *Server) ServeREST(lis net.Listener) error {
	rs := &restServer{served: make(chan struct{})}
	rs.hs = &http.Server{
		Handler:           s.RESTHandler(),
		ReadHeaderTimeout: time.Minute,
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				rs.conns.Add(1)
			case http.StateHijacked, http.StateClosed:
				rs.conns.Done()
			}
		},
	}
	s.restServers.mu.Lock()
	if s.restServers.closed {
		s.restServers.mu.Unlock()
		_ = lis.Close()
		return fmt.Errorf("iamtest: ServeREST: the server is closed: %w", net.ErrClosed)
	}
	s.restServers.running = append(s.restServers.running, rs)
	s.restServers.mu.Unlock()

	defer close(rs.served)
	err := rs.hs.Serve(lis)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// closeRESTServers stops every ServeREST server and waits until their
// connections have ended; ServeREST refuses to start after it.
func (s *Server) closeRESTServers() {
	s.restServers.mu.Lock()
	s.restServers.closed = true
	running := s.restServers.running
	s.restServers.running = nil
	s.restServers.mu.Unlock()
	for _, rs := range running {
		_ = rs.hs.Close()
		// Serve has returned once served is closed: no connection can be
		// accepted (and Add to conns) after that.
		<-rs.served
		rs.conns.Wait()
	}
}
