package herd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults for [ContentionConfig].
const (
	// DefaultContentionClients is the number of clients SimulateContention
	// runs when ContentionConfig.Clients is 0.
	DefaultContentionClients = 100
	// DefaultService is the read-to-write time SimulateContention uses when
	// ContentionConfig.Service is 0: one 50 ms round trip.
	DefaultService = 50 * time.Millisecond
)

// ContentionConfig describes N clients each adding its own change to ONE IAM
// policy by read-modify-write, for [SimulateContention]. The zero value of
// each field means what its comment says; negative values are errors.
type ContentionConfig struct {
	// Clients is the number of clients, each wanting its one write to land
	// (0: DefaultContentionClients; at most MaxClients).
	Clients int
	// Service is the time from a read-modify-write's read (which returns the
	// policy's current etag) to its write arriving at the server, which is
	// where the etag is checked (0: DefaultService, a 50 ms round trip).
	// While one client is between read and write, others may land first.
	Service time.Duration
	// Deadline: a client gives up instead of starting a wait that would end
	// more than Deadline after its first conflict (0: never gives up).
	Deadline time.Duration
	// Start: clients' first reads are spread uniformly over [0, Start)
	// (0: all clients read at t = 0).
	Start time.Duration
	// Seed selects the random streams; equal seeds give equal results.
	Seed uint64
}

func (c ContentionConfig) withDefaults() (ContentionConfig, error) {
	switch {
	case c.Clients < 0 || c.Clients > MaxClients:
		return c, fmt.Errorf("herd: ContentionConfig.Clients is %d; want 0..%d (0 means %d)", c.Clients, MaxClients, DefaultContentionClients)
	case c.Service < 0:
		return c, fmt.Errorf("herd: ContentionConfig.Service is %v; want >= 0 (0 means %v)", c.Service, DefaultService)
	case c.Service >= Horizon:
		return c, fmt.Errorf("herd: ContentionConfig.Service is %v; want less than the %v horizon", c.Service, Horizon)
	case c.Deadline < 0:
		return c, fmt.Errorf("herd: ContentionConfig.Deadline is %v; want >= 0 (0 means never give up)", c.Deadline)
	case c.Start < 0:
		return c, fmt.Errorf("herd: ContentionConfig.Start is %v; want >= 0", c.Start)
	case c.Start >= Horizon:
		return c, fmt.Errorf("herd: ContentionConfig.Start is %v; want less than the %v horizon", c.Start, Horizon)
	}
	if c.Clients == 0 {
		c.Clients = DefaultContentionClients
	}
	if c.Service == 0 {
		c.Service = DefaultService
	}
	return c, nil
}

// ContentionResult is the outcome of one [SimulateContention] run.
type ContentionResult struct {
	Strategy string           // the strategy's name
	Config   ContentionConfig // the scenario, with defaults filled in

	Writes    int // SetIamPolicy calls sent: Landed + Conflicts
	Landed    int // writes that landed; one per client that did not give up
	Conflicts int // writes rejected with ABORTED because their etag was stale
	GaveUp    int // clients that hit the deadline; Landed + GaveUp = Clients

	// Completion times: when a client's write landed or it gave up, in
	// virtual time since t = 0. AllLanded is the latest; P50 and P99 are
	// nearest-rank percentiles over all clients.
	AllLanded time.Duration
	P50, P99  time.Duration
}

// Event kinds in SimulateContention.
const (
	evRead uint8 = iota
	evWrite
)

// rmwClient is one client's state in SimulateContention.
type rmwClient struct {
	etag      uint64        // policy version its last read saw
	writes    int           // writes sent so far
	landed    int           // writes landed (0 or 1)
	firstFail time.Duration // time of its first conflict
	rng       *rand.Rand
}

// SimulateContention runs N clients through read-modify-write on one policy
// with every client retrying by strategy s (the model: package doc,
// Contention on one policy). The result depends only on cfg and s. A bad
// cfg or s, a negative delay, a client exceeding MaxCallsPerClient writes,
// or an event beyond Horizon is an error. When ctx ends,
// SimulateContention stops within cancelEvery events and returns ctx's
// error.
func SimulateContention(ctx context.Context, cfg ContentionConfig, s Strategy) (ContentionResult, error) {
	res, _, err := simulateContention(ctx, cfg, s)
	return res, err
}

// simulateContention is SimulateContention that also returns how many writes
// landed for each client, for tests.
func simulateContention(ctx context.Context, cfg ContentionConfig, s Strategy) (ContentionResult, []int, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return ContentionResult{}, nil, err
	}
	if err := s.validate(); err != nil {
		return ContentionResult{}, nil, err
	}

	res := ContentionResult{Strategy: s.Name, Config: cfg}
	clients := make([]rmwClient, cfg.Clients)
	q := &queue{events: make([]event, 0, cfg.Clients)}
	var stop canceller
	for i := range clients {
		if err := stop.check(ctx); err != nil {
			return ContentionResult{}, nil, err
		}
		clients[i].rng = clientRand(cfg.Seed, i)
		var at time.Duration
		if cfg.Start > 0 {
			at = time.Duration(clients[i].rng.Int64N(int64(cfg.Start)))
		}
		q.schedule(at, i, evRead)
	}

	var version uint64 // the policy's etag
	done := make([]time.Duration, 0, cfg.Clients)
	for q.Len() > 0 {
		if err := stop.check(ctx); err != nil {
			return ContentionResult{}, nil, err
		}
		ev := q.next()
		t, c := ev.at, &clients[ev.client]
		if ev.kind == evRead {
			c.etag = version
			if cfg.Service >= Horizon-t {
				return ContentionResult{}, nil, fmt.Errorf("herd: strategy %q: client %d would write after the %v horizon", s.Name, ev.client, Horizon)
			}
			q.schedule(t+cfg.Service, int(ev.client), evWrite)
			continue
		}

		res.Writes++
		c.writes++
		if c.etag == version {
			version++
			c.landed++
			res.Landed++
			done = append(done, t)
			continue
		}

		res.Conflicts++
		n := c.writes - 1 // conflicts so far, minus one: every earlier write conflicted
		if n == 0 {
			c.firstFail = t
		}
		wait := s.delay(n, t-c.firstFail, c.rng.Float64())
		if wait < 0 {
			return ContentionResult{}, nil, fmt.Errorf("herd: strategy %q returned a negative delay %v for retry %d", s.Name, wait, n)
		}
		if cfg.Deadline > 0 && wait > c.firstFail+cfg.Deadline-t {
			res.GaveUp++
			done = append(done, t)
			continue
		}
		if c.writes >= MaxCallsPerClient {
			return ContentionResult{}, nil, fmt.Errorf("herd: strategy %q: client %d sent %d writes without landing or giving up", s.Name, ev.client, c.writes)
		}
		if wait >= Horizon-t {
			return ContentionResult{}, nil, fmt.Errorf("herd: strategy %q: client %d would retry after %v, past the %v horizon", s.Name, ev.client, t+wait, Horizon)
		}
		q.schedule(t+wait, int(ev.client), evRead)
	}

	if len(done) > 0 {
		res.AllLanded = done[len(done)-1]
	}
	res.P50 = percentile(done, 0.50)
	res.P99 = percentile(done, 0.99)
	landed := make([]int, len(clients))
	for i := range clients {
		landed[i] = clients[i].landed
	}
	return res, landed, nil
}
