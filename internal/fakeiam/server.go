package fakeiam

import (
	"context"
	"net"
	"sync"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/test/bufconn"
)

// Server is an in-process fake of the Google Cloud IAM gRPC API with fault
// injection. It serves google.iam.v1.IAMPolicy, google.iam.admin.v1.IAM and
// the IAM methods of google.cloud.resourcemanager.v3 Projects, Folders and
// Organizations, all backed by one policy store.
//
// A Server is created by New, is served over an in-memory bufconn listener
// (started by StartBufconn, or lazily by ClientOptions and Dial) and/or over a
// real listener (Serve), and must be stopped with Close. All its methods are
// safe for concurrent use.
type Server struct {
	grpc *grpc.Server

	cfgMu sync.RWMutex
	cfg   config

	state  *state
	deny   *denyState // deny policies and their operations (deny.go)
	faults *faults
	log    *callLog

	lifeMu  sync.Mutex
	bufLis  *bufconn.Listener
	addr    net.Addr
	closed  bool
	serveWG sync.WaitGroup
}

// config holds the settings that options and setters change.
type config struct {
	now        func() time.Time
	sleep      func(ctx context.Context, d time.Duration) error
	propDelay  time.Duration
	propReads  int
	seed       int64
	staleCode  codes.Code
	bufferSize int
	fid        fidelity
}

// Option configures a Server in New.
type Option func(*config)

// WithClock makes the fake read time from now instead of time.Now. The fake's
// clock decides outage windows, propagation delays, the Time of logged calls
// and the timestamps it writes. now must be safe for concurrent use.
// A nil now is ignored.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithSleep makes injected latency wait through sleep instead of a real timer.
// sleep must return ctx.Err() (or another error) when ctx ends before d has
// passed, and must be safe for concurrent use. A nil sleep is ignored.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *config) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// WithSeed seeds the random source behind failure rates and lost-answer
// rates. The same seed and the same sequence of calls give the same faults.
// Without this option the seed is 1, so a fake is deterministic by default.
func WithSeed(seed int64) Option {
	return func(c *config) { c.seed = seed }
}

// withPropagationDelay makes a newly created service account invisible to
// reads (GetServiceAccount, and GetIamPolicy, SetIamPolicy and
// TestIamPermissions through google.iam.admin.v1.IAM) for d on the fake's
// clock: they answer NOT_FOUND, as IAM's eventually consistent reads do.
// Zero (the default) turns it off.
func withPropagationDelay(d time.Duration) Option {
	return func(c *config) { c.propDelay = max(d, 0) }
}

// WithPropagationReads makes a newly created service account answer NOT_FOUND
// to its first n reads (the same reads as withPropagationDelay), counted per
// account. Zero (the default) turns it off. When both a delay and a read count
// are set, an account is hidden while either still holds.
func WithPropagationReads(n int) Option {
	return func(c *config) { c.propReads = max(n, 0) }
}

// withStaleEtagCode sets the code SetIamPolicy answers for a stale etag:
// ABORTED by default, as IAM does; FAILED_PRECONDITION imitates services that
// answer a stale etag that way. The message is concurrentChangeMessage either
// way. OK is ignored.
func withStaleEtagCode(code codes.Code) Option {
	return func(c *config) {
		if code != codes.OK {
			c.staleCode = code
		}
	}
}

// New builds a fake IAM server. It listens on nothing yet: call StartBufconn
// (or just ClientOptions or Dial, which start the in-memory listener on first
// use) or Serve. Close must be called to release it.
func New(opts ...Option) *Server {
	cfg := config{
		now:        time.Now,
		sleep:      realSleep,
		seed:       1,
		staleCode:  codes.Aborted,
		bufferSize: 1 << 20,
		fid:        defaultFidelity(),
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s := &Server{cfg: cfg}
	s.state = newState(cfg.seed)
	s.deny = newDenyState()
	s.faults = newFaults(cfg.seed)
	s.log = &callLog{}
	s.grpc = grpc.NewServer(grpc.ChainUnaryInterceptor(s.intercept))

	policies := &policyService{s: s}
	iampb.RegisterIAMPolicyServer(s.grpc, policies)
	adminpb.RegisterIAMServer(s.grpc, &adminService{s: s})
	resourcemanagerpb.RegisterProjectsServer(s.grpc, &projectsService{p: policies})
	resourcemanagerpb.RegisterFoldersServer(s.grpc, &foldersService{p: policies})
	resourcemanagerpb.RegisterOrganizationsServer(s.grpc, &organizationsService{p: policies})
	registerDeny(s)
	return s
}

// setClock replaces the fake's clock (see WithClock). A nil now restores
// time.Now.
func (s *Server) setClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.cfgMu.Lock()
	s.cfg.now = now
	s.cfgMu.Unlock()
}

// setSleep replaces the func that injected latency waits through (see
// WithSleep). A nil sleep restores real timers.
func (s *Server) setSleep(sleep func(ctx context.Context, d time.Duration) error) {
	if sleep == nil {
		sleep = realSleep
	}
	s.cfgMu.Lock()
	s.cfg.sleep = sleep
	s.cfgMu.Unlock()
}

// SetSeed reseeds the random source behind failure and lost-answer rates, as
// WithSeed does at construction.
func (s *Server) SetSeed(seed int64) {
	s.faults.reseed(seed)
}

// SetPropagationDelay sets the propagation delay of service accounts created
// from now on and of those still propagating (see withPropagationDelay).
func (s *Server) SetPropagationDelay(d time.Duration) {
	s.cfgMu.Lock()
	s.cfg.propDelay = max(d, 0)
	s.cfgMu.Unlock()
}

// SetPropagationReads sets how many reads of a new service account answer
// NOT_FOUND (see WithPropagationReads). It applies to accounts created from
// now on; accounts already created keep the count they were created with.
func (s *Server) SetPropagationReads(n int) {
	s.cfgMu.Lock()
	s.cfg.propReads = max(n, 0)
	s.cfgMu.Unlock()
}

// SetStaleEtagCode changes the code of the stale-etag answer (see
// withStaleEtagCode). OK restores ABORTED.
func (s *Server) SetStaleEtagCode(code codes.Code) {
	if code == codes.OK {
		code = codes.Aborted
	}
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
