package herd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Tick is the server's accounting interval: capacity is per tick and
// [Result.Series] counts calls per tick.
const Tick = 100 * time.Millisecond

// DefaultClients is the number of clients [Simulate] runs when
// [Config.Clients] is 0.
const DefaultClients = 1000

// Limits that keep a bad strategy or config from running away. A simulation
// that would exceed one ends with an error instead.
const (
	// MaxClients is the most clients a simulation accepts.
	MaxClients = 1_000_000
	// MaxCallsPerClient is the most calls (or read-modify-writes) one client
	// may make; a strategy whose delays are too short to ever get through
	// (say, always 0 during an outage with no deadline) hits it.
	MaxCallsPerClient = 10_000
	// Horizon is how far virtual time may run.
	Horizon = 24 * time.Hour
)

// Strategy is a retry strategy under test.
type Strategy struct {
	// Name labels the strategy in results, tables and plots; it must not be empty.
	Name string
	// Delay gives the wait before retry n (n counts from 0: the first retry
	// is n = 0) given a fresh uniform r in [0,1) from the client's own random
	// stream. It must not return a negative duration. It is called once per
	// failure, in virtual-time order, from one goroutine.
	Delay func(n int, r float64) time.Duration
	// After, when set, is used instead of Delay, for a strategy that also
	// looks at how long ago the client's first failure was (since >= 0):
	// the same contract otherwise.
	After func(n int, since time.Duration, r float64) time.Duration
}

func (s Strategy) validate() error {
	if s.Name == "" {
		return errors.New("herd: Strategy.Name is empty")
	}
	if s.Delay == nil && s.After == nil {
		return fmt.Errorf("herd: strategy %q has no Delay function", s.Name)
	}
	return nil
}

// delay is the wait before retry n, the client's first failure since ago.
func (s Strategy) delay(n int, since time.Duration, r float64) time.Duration {
	if s.After != nil {
		return s.After(n, since, r)
	}
	return s.Delay(n, r)
}

// Config describes a thundering-herd scenario for [Simulate]. The zero value
// of each field means what its comment says; negative values are errors.
type Config struct {
	// Clients is the number of clients, each wanting one successful call
	// (0: DefaultClients; at most MaxClients).
	Clients int
	// Outage: every call at a time in [0, Outage) fails (the server is down).
	Outage time.Duration
	// Capacity is the number of calls the server can take per Tick; calls
	// beyond that in a tick fail too (overload). 0: no limit.
	Capacity int
	// Deadline: a client gives up instead of starting a wait that would end
	// more than Deadline after its first failure (0: never gives up).
	Deadline time.Duration
	// Start: clients' first calls are spread uniformly over [0, Start)
	// (0: all clients call at t = 0, the synchronized start that makes a herd).
	Start time.Duration
	// Seed selects the random streams; equal seeds give equal results.
	Seed uint64
}

// withDefaults returns c with zero fields defaulted, or an error naming the
// first bad field.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Clients < 0 || c.Clients > MaxClients:
		return c, fmt.Errorf("herd: Config.Clients is %d; want 0..%d (0 means %d)", c.Clients, MaxClients, DefaultClients)
	case c.Outage < 0:
		return c, fmt.Errorf("herd: Config.Outage is %v; want >= 0", c.Outage)
	case c.Outage >= Horizon:
		return c, fmt.Errorf("herd: Config.Outage is %v; want less than the %v horizon", c.Outage, Horizon)
	case c.Capacity < 0:
		return c, fmt.Errorf("herd: Config.Capacity is %d; want >= 0 (0 means no limit)", c.Capacity)
	case c.Deadline < 0:
		return c, fmt.Errorf("herd: Config.Deadline is %v; want >= 0 (0 means never give up)", c.Deadline)
	case c.Start < 0:
		return c, fmt.Errorf("herd: Config.Start is %v; want >= 0", c.Start)
	case c.Start >= Horizon:
		return c, fmt.Errorf("herd: Config.Start is %v; want less than the %v horizon", c.Start, Horizon)
	}
	if c.Clients == 0 {
		c.Clients = DefaultClients
	}
	return c, nil
}

// Result is the outcome of one [Simulate] run.
type Result struct {
	Strategy string // the strategy's name
	Config   Config // the scenario, with defaults filled in

	Calls int // all calls sent, first calls and retries; equals the sum of Series
	// Peak is the most calls in one tick; it equals the maximum of Series.
	// With Start 0 it is at least the opening burst of all Clients, the same
	// for every strategy; RetryPeak is what tells strategies apart.
	Peak int
	// RetryPeak is the most retries (calls after a client's first) in one
	// tick: the synchronized waves that jitter breaks up.
	RetryPeak int

	Succeeded int // clients whose call got through
	GaveUp    int // clients that hit the deadline; Succeeded + GaveUp = Clients

	// Completion times: when a client succeeded or gave up, in virtual time
	// since t = 0 (not since the client's own start). AllDone is the latest;
	// P50 and P99 are nearest-rank percentiles over all clients.
	AllDone  time.Duration
	P50, P99 time.Duration

	Series []int // calls sent per tick; index i covers [i*Tick, (i+1)*Tick); the last entry is non-zero
}

// herdClient is one client's state in Simulate.
type herdClient struct {
	calls     int           // calls sent so far
	firstFail time.Duration // time of the first failure (its first call: a client stops at its first success)
	rng       *rand.Rand
}

// Simulate runs the thundering-herd scenario cfg with every client retrying
// by strategy s, and returns what the server saw (the model: package doc,
// The thundering herd). The result depends only on cfg and s: the same seed
// gives the same Result. A bad cfg or s, a negative delay, a client
// exceeding MaxCallsPerClient, or a call beyond Horizon is an error. When
// ctx ends, Simulate stops within cancelEvery events and returns ctx's
// error.
func Simulate(ctx context.Context, cfg Config, s Strategy) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := s.validate(); err != nil {
		return Result{}, err
	}

	res := Result{Strategy: s.Name, Config: cfg}
	clients := make([]herdClient, cfg.Clients)
	q := &queue{events: make([]event, 0, cfg.Clients)}
	var stop canceller
	for i := range clients {
		if err := stop.check(ctx); err != nil {
			return Result{}, err
		}
		clients[i].rng = clientRand(cfg.Seed, i)
		var at time.Duration
		if cfg.Start > 0 {
			at = time.Duration(clients[i].rng.Int64N(int64(cfg.Start)))
		}
		q.schedule(at, i, 0)
	}

	var served, retries []int // per tick: calls that got through, retries sent
	done := make([]time.Duration, 0, cfg.Clients)
	for q.Len() > 0 {
		if err := stop.check(ctx); err != nil {
			return Result{}, err
		}
		ev := q.next()
		t, c := ev.at, &clients[ev.client]
		tick := int(t / Tick)
		for len(res.Series) <= tick {
			res.Series = append(res.Series, 0)
			served = append(served, 0)
			retries = append(retries, 0)
		}
		res.Series[tick]++
		res.Calls++
		c.calls++
		if c.calls > 1 {
			retries[tick]++
		}

		if t >= cfg.Outage && (cfg.Capacity == 0 || served[tick] < cfg.Capacity) {
			served[tick]++
			res.Succeeded++
			done = append(done, t)
			continue
		}

		if c.calls == 1 {
			c.firstFail = t
		}
		n := c.calls - 1
		wait := s.delay(n, t-c.firstFail, c.rng.Float64())
		if wait < 0 {
			return Result{}, fmt.Errorf("herd: strategy %q returned a negative delay %v for retry %d", s.Name, wait, n)
		}
		if cfg.Deadline > 0 && wait > c.firstFail+cfg.Deadline-t {
			res.GaveUp++
			done = append(done, t)
			continue
		}
		if c.calls >= MaxCallsPerClient {
			return Result{}, fmt.Errorf("herd: strategy %q: client %d made %d calls without succeeding or giving up; delays too short for the outage (set a Deadline?)", s.Name, ev.client, c.calls)
		}
		if wait >= Horizon-t {
			return Result{}, fmt.Errorf("herd: strategy %q: client %d would retry after %v, past the %v horizon", s.Name, ev.client, t+wait, Horizon)
		}
		q.schedule(t+wait, int(ev.client), 0)
	}

	for i, n := range res.Series {
		res.Peak = max(res.Peak, n)
		res.RetryPeak = max(res.RetryPeak, retries[i])
	}
	if len(done) > 0 {
		res.AllDone = done[len(done)-1] // events pop in time order
	}
	res.P50 = percentile(done, 0.50)
	res.P99 = percentile(done, 0.99)
	return res, nil
}
