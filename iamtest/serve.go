package iamtest

import (
	"errors"
	"net"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// Serve serves the fake on lis as well, such as a TCP listener that programs
// in other processes (or other languages) dial, and blocks until Close stops
// the server or lis fails. It returns nil once Close has stopped it, an error
// if the server was closed before Serve was called (lis is then closed), and
// the listener's error otherwise. The in-memory listener of ClientOptions and
// Conn keeps serving beside it; the controls and the call log cover calls
// from both. Serve may be called for several listeners, each on its own
// goroutine.
func (s *Server) Serve(lis net.Listener) error {
	err := s.fake.Serve(lis)
	if errors.Is(err, fakeiam.ErrClosed) {
		return errors.New("iamtest: Serve: the server is closed")
	}
	return err
}
