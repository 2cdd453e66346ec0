package iamtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/test/bufconn"
)

// Server is a running fake IAM server. Its methods are safe for concurrent
// use.
type Server struct {
	grpc *grpc.Server
	conn *grpc.ClientConn // Conn's, owned by the server; the REST face's too

	cfgMu sync.RWMutex
	cfg   config

	state  *state
	deny   *denyState // deny policies and their operations (deny.go)
	faults *faults
	quotas quotas // SetQuotas (quota.go)
	log    *callLog

	lifeMu  sync.Mutex
	bufLis  *bufconn.Listener
	closed  bool
	serveWG sync.WaitGroup

	restFace    restFace    // the REST face, started on first use (rest.go)
	restServers restServers // those of ServeREST (serverest.go)
	closeOnce   sync.Once
}

// config holds the settings that options and setters change.
type config struct {
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) error
	propDelay time.Duration
	propReads int
	seed      int64
	staleCode codes.Code
	fid       fidelity
}

// Clock is the fake's source of time: its injected latency waits through
// Sleep, and it reads Now for propagation windows and the Time of logged
// calls. A virtual clock shared with the retrying code under test lets a test
// run hours of backoff in no real time.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits d, or until ctx ends, when it returns ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// Option configures a Server made by NewServer or New.
type Option func(*config) error

// WithClock makes the fake read time from c and wait its injected latency
// through c instead of the wall clock. c must be safe for concurrent use.
// A nil c is refused.
func WithClock(c Clock) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("iamtest: WithClock(nil): a Clock is required")
		}
		cfg.now, cfg.sleep = c.Now, c.Sleep
		if vc, ok := c.(*VirtualClock); ok {
			// The fake's handlers sleep in their caller's place: no thread check.
			cfg.sleep = vc.c.Sleep
		}
		return nil
	}
}

// WithSeed seeds the random source behind SetFailureRate,
// SetLostAnswerRate and SetShuffleBindings. The same seed and the same
// sequence of calls give the same faults. Without it the seed is 1: a fake
// is deterministic by default.
func WithSeed(seed int64) Option {
	return func(cfg *config) error {
		cfg.seed = seed
		return nil
	}
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
	cfg := config{
		now:       time.Now,
		sleep:     realSleep,
		seed:      1,
		staleCode: codes.Aborted,
		fid:       defaultFidelity(),
	}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("iamtest: option %d is nil", i)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Server{cfg: cfg}
	s.state = newState(cfg.seed)
	s.deny = newDenyState()
	s.faults = newFaults(cfg.seed)
	s.log = &callLog{}
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(s.intercept))
	reg := s.grpc
	policies := &policyService{s: s}
	iampb.RegisterIAMPolicyServer(reg, policies)
	adminpb.RegisterIAMServer(reg, &adminService{s: s})
	resourcemanagerpb.RegisterProjectsServer(reg, &projectsService{p: policies})
	resourcemanagerpb.RegisterFoldersServer(reg, &foldersService{p: policies})
	resourcemanagerpb.RegisterOrganizationsServer(reg, &organizationsService{p: policies})
	iamv2pb.RegisterPoliciesServer(reg, &denyService{s: s})
	longrunningpb.RegisterOperationsServer(reg, &operationsService{s: s})

	conn, err := s.Dial(context.Background())
	if err != nil {
		s.Close()
		return nil, err
	}
	s.conn = conn
	return s, nil
}

// Close stops the server at once: open connections are dropped, calls in
// flight fail (their waits for injected latency end with their contexts)
// and every goroutine the server started has ended when Close returns. Conn
// is closed too; clients made from ClientOptions must be closed by their
// owners. Close may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.conn != nil {
			_ = s.conn.Close()
		}
		s.lifeMu.Lock()
		s.closed = true
		s.lifeMu.Unlock()
		s.grpc.Stop()
		s.serveWG.Wait()
		s.closeREST()
		s.closeRESTServers()
	})
}

// Conn returns a client connection to the fake, for generated stubs such as
// iampb.NewIAMPolicyClient(srv.Conn()). It is shared, owned by the server and
// closed by Close: do not close it yourself. Dial options of your own (an
// interceptor under test) need a client made from ClientOptions instead.
func (s *Server) Conn() *grpc.ClientConn { return s.conn }

// SetSeed reseeds the random source behind SetFailureRate and
// SetLostAnswerRate, as WithSeed does at the start.
func (s *Server) SetSeed(seed int64) { s.faults.reseed(seed) }

// SetStaleEtagCode sets the code a SetIamPolicy with a stale etag is answered
// with: ABORTED by default, as IAM answers; FAILED_PRECONDITION imitates the
// services that answer a stale etag that way. It panics on code OK.
func (s *Server) SetStaleEtagCode(code codes.Code) {
	mustFailCode("SetStaleEtagCode", code)
	s.cfgMu.Lock()
	s.cfg.staleCode = code
	s.cfgMu.Unlock()
}

// staleEtagCode returns the code of the stale-etag answer.
func (s *Server) staleEtagCode() codes.Code {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.staleCode
}

// now reads the fake's clock.
func (s *Server) now() time.Time {
	s.cfgMu.RLock()
	now := s.cfg.now
	s.cfgMu.RUnlock()
	return now()
}

// sleep waits d through the configured sleep func.
func (s *Server) sleep(ctx context.Context, d time.Duration) error {
	s.cfgMu.RLock()
	sleep := s.cfg.sleep
	s.cfgMu.RUnlock()
	return sleep(ctx, d)
}

// propagation returns the current propagation settings.
func (s *Server) propagation() (time.Duration, int) {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.propDelay, s.cfg.propReads
}

// realSleep waits d on a real timer, or until ctx ends.
func realSleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
