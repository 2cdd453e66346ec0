package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/cmd/iamretry/internal/herd"
	"github.com/iamretry/iamretry/interceptor"
)

const simulateLong = `
The thundering herd, made visible. N clients call one server at the same
moment; it is down for an outage, then takes only so many calls per 100 ms
(more fail too). Every client retries with one strategy until its call gets
through or its retry deadline comes:

  documented   the IAM guidance: min(2^n s + a random fraction of a second,
               maximum_backoff) (interceptor.DefaultBackoff)
  full-jitter  a uniform wait in (0, 2^n s]          (interceptor.FullJitter)
  equal-jitter half of 2^n s plus a uniform half      (interceptor.EqualJitter)
  no-jitter    exactly 2^n s: everyone retries together (interceptor.NoJitter)

For each: the calls the server saw, the most in one 100 ms tick (all, and
retries alone: the waves), how many got through or gave up, and when (p50,
p99, all done). --contention adds the case of N clients running
read-modify-write on ONE IAM policy, where a write with a stale etag fails
ABORTED and the whole read-modify-write is rerun (clients default to 100
there), with the Updater's conflict schedules too (n counts conflicts):

  scaled       the default, on the scale of w, the read-modify-write's own
               duration (here 50 ms; 100 ms until measured): first rerun
               log-uniform in [w, 6w) (60%) or uniform in [6w, 45w); later
               ones uniform up to what is left of 26 s after the first
               conflict                          (interceptor.ScaledConflicts)
  spread       first rerun: a log-uniform wait in [80 ms, 18 s); later
               ones: a uniform wait in (0, W], W what is left of 27 s after
               the first conflict, at least 1 s  (interceptor.SpreadConflicts)
 Time is virtual and the result is the same for the same --seed.
--plot draws calls per 100 ms over time, one line per strategy.`

type simulateFlags struct {
	clients    int
	outage     time.Duration
	capacity   int
	deadline   time.Duration
	maxBackoff time.Duration
	seed       uint64
	plot       string
	contention bool
	seeds      int
	clientsSet bool
}

func simulateCommand() *command {
	return &command{
		name:    "simulate",
		summary: "simulate a thundering herd of retrying clients, with and without jitter",
		usage:   "iamretry simulate [--clients N] [--outage D] [--capacity C] [--plot FILE.png|.svg] [--contention]",
		long:    simulateLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &simulateFlags{}
			fs.IntVar(&f.clients, "clients", herd.DefaultClients, fmt.Sprintf("number of clients (1..%d); with --contention alone, %d", herd.MaxClients, herd.DefaultContentionClients))
			fs.DurationVar(&f.outage, "outage", 10*time.Second, "how long the server is down from t = 0")
			fs.IntVar(&f.capacity, "capacity", 50, "calls the server can take per 100 ms once it is back (0: no limit)")
			fs.DurationVar(&f.deadline, "deadline", interceptor.DefaultDeadline, "each client's retry deadline, from its first failure (0: never give up)")
			fs.DurationVar(&f.maxBackoff, "max-backoff", interceptor.DefaultBackoff().Max, "the guidance's maximum_backoff: the longest wait")
			fs.Uint64Var(&f.seed, "seed", 1, "random seed; equal seeds give equal results")
			fs.StringVar(&f.plot, "plot", "", "also draw calls per 100 ms to this file (.png or .svg)")
			fs.BoolVar(&f.contention, "contention", false, "also simulate read-modify-write contention on one policy")
			fs.IntVar(&f.seeds, "seeds", 1, "with --contention: also summarise this many seeds (from --seed on) per strategy (1..1000)")
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q; simulate takes flags only", args[0])
				}
				fs.Visit(func(fl *flag.Flag) {
					if fl.Name == "clients" {
						f.clientsSet = true
					}
				})
				if err := f.validate(); err != nil {
					return err
				}
				return runSimulate(ctx, cio, f)
			}
		},
	}
}

func (f *simulateFlags) validate() error {
	if f.clients < 1 || f.clients > herd.MaxClients {
		return usagef("--clients %d: must be between 1 and %d", f.clients, herd.MaxClients)
	}
	if f.seeds < 1 || f.seeds > 1000 {
		return usagef("--seeds %d: must be between 1 and 1000", f.seeds)
	}
	if f.seeds > 1 && !f.contention {
		return usagef("--seeds %d: applies only with --contention (the herd simulation summarises one seed)", f.seeds)
	}
	if f.capacity < 0 {
		return usagef("--capacity %d: must not be negative (0 means no limit)", f.capacity)
	}
	if err := checkNonNegative("outage", f.outage); err != nil {
		return err
	}
	if err := checkNonNegative("deadline", f.deadline); err != nil {
		return err
	}
	if f.maxBackoff < interceptor.DefaultBackoff().Initial {
		return usagef("--max-backoff %v: must be at least the first wait, %v", f.maxBackoff, interceptor.DefaultBackoff().Initial)
	}
	if f.outage > time.Hour {
		return usagef("--outage %v: at most 1h", f.outage)
	}
	if f.plot != "" {
		switch strings.ToLower(filepath.Ext(f.plot)) {
		case ".png", ".svg":
		default:
			return usagef("--plot %q: the file must end in .png or .svg", f.plot)
		}
	}
	return nil
}

// strategies are the retry strategies compared, built from the interceptor's
// own Backoff and jitters so that the simulation runs the real formula.
func strategies(maxBackoff time.Duration) []herd.Strategy {
	mk := func(name string, j interceptor.Jitter) herd.Strategy {
		b := interceptor.DefaultBackoff()
		b.Max = maxBackoff
		if j != nil {
			b.Jitter = j
		}
		return herd.Strategy{Name: name, Delay: b.Delay}
	}
	return []herd.Strategy{
		mk("documented", nil),
		mk("full-jitter", interceptor.FullJitter),
		mk("equal-jitter", interceptor.EqualJitter),
		mk("no-jitter", interceptor.NoJitter),
	}
}

// conflictStrategies are the schedules compared under contention: the
// Updater's own conflict schedules (interceptor.ConflictBackoff, the
// default first) and the jitters of the documented backoff, each truncated
// at maxBackoff as the Updater truncates them (documented is
// interceptor.DocumentedConflicts: its n counts conflicts). The spreading
// schedules' waits are those a real Transact sleeps (see conflictReplay)
// when a read-modify-write takes service from read to answered write.
func conflictStrategies(maxBackoff, service time.Duration) ([]herd.Strategy, error) {
	scaled, err := newConflictReplay(interceptor.ScaledConflicts, maxBackoff, service)
	if err != nil {
		return nil, err
	}
	spread, err := newConflictReplay(interceptor.SpreadConflicts, maxBackoff, service)
	if err != nil {
		return nil, err
	}
	return append([]herd.Strategy{
		{Name: "scaled (default)", After: scaled.after},
		{Name: "spread", After: spread.after},
	}, strategies(maxBackoff)...), nil
}

// conflictReplay gives the wait the library's Transact sleeps after a
// read-modify-write's conflict n (n from 0), its first conflict since ago,
// with the random draw r, on a Retrier whose maximum_backoff is
// maxBackoff, for one of the Updater's spreading schedules, which the
// library shows only through Transact. Each call replays the n+1 conflicts
// on a clock of its own (it is also the Retrier's random source): each read
// and each write takes half the simulation's service time, so that
// Transact times its reruns as it does against a server; the clock stands
// still during the waits before conflict n, except the last, which ends so
// that conflict n comes since after the first; the wait after conflict n
// is the answer. So the simulator runs the library's schedule and states
// none of its own. The cost is O(n) per wait.
type conflictReplay struct {
	mu      sync.Mutex // after may be called from several simulations at once
	retrier *interceptor.Retrier
	rmw     interceptor.ReadModifyWrite[struct{}]
	service time.Duration // a read and a write, back to back

	now    time.Time
	first  time.Time     // the first conflict
	n      int           // the conflict whose wait is wanted
	since  time.Duration // the clock at conflict n, after the first conflict
	r      float64       // every draw of the random source
	sleeps int           // the waits slept so far in this replay
	wait   time.Duration // the wait after conflict n: the answer
}

// errReplayed ends a replay once it has the wait it wants.
var errReplayed = errors.New("the replay has its wait")

// replayEpoch is where a replay's clock starts; any time would do.
var replayEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newConflictReplay(schedule interceptor.ConflictBackoff, maxBackoff, service time.Duration) (*conflictReplay, error) {
	x := &conflictReplay{service: service}
	r, err := interceptor.New(
		interceptor.WithClock(x),
		interceptor.WithRandom(func() float64 { return x.r }),
		interceptor.WithMaxBackoff(maxBackoff),
		interceptor.WithDeadline(0), // the simulator keeps each client's deadline
	)
	if err != nil {
		return nil, err
	}
	x.retrier = r
	aborted := status.Error(grpccodes.Aborted, "simulated concurrent change")
	x.rmw = interceptor.ReadModifyWrite[struct{}]{
		Method: "iamretry.simulate/Conflict",
		Read: func(context.Context) (struct{}, error) {
			x.now = x.now.Add(x.service / 2)
			return struct{}{}, nil
		},
		Modify: func(v struct{}) (struct{}, bool, error) { return v, true, nil },
		Write: func(context.Context, struct{}) (struct{}, error) {
			x.now = x.now.Add(x.service - x.service/2)
			if x.first.IsZero() {
				x.first = x.now
			}
			return struct{}{}, aborted
		},
		Etag:      func(struct{}) string { return "etag" },
		Conflicts: schedule,
	}
	return x, nil
}

// after is a herd.Strategy's After. A replay that does not end with its
// wait (a library that stopped rerunning conflicts) returns -1, which the
// simulation reports as an error.
func (x *conflictReplay) after(n int, since time.Duration, r float64) time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.now, x.first, x.n, x.since, x.r, x.sleeps, x.wait = replayEpoch, time.Time{}, n, since, r, 0, -1
	if _, err := interceptor.Transact(context.Background(), x.retrier, x.rmw); !errors.Is(err, errReplayed) {
		return -1
	}
	return x.wait
}

// Now is the replay's clock (an interceptor.Clock).
func (x *conflictReplay) Now() time.Time { return x.now }

// Sleep records the wait after conflict n and ends the replay; an earlier
// wait takes no time, except the last of them, which ends so that the
// rerun after it conflicts since after the first conflict.
func (x *conflictReplay) Sleep(_ context.Context, d time.Duration) error {
	if x.sleeps == x.n {
		x.wait = d
		return errReplayed
	}
	x.sleeps++
	if x.sleeps == x.n {
		x.now = x.first.Add(max(x.since-x.service, 0))
	}
	return nil
}

func runSimulate(ctx context.Context, cio *cmdIO, f *simulateFlags) error {
	w := cio.stdout
	cfg := herd.Config{Clients: f.clients, Outage: f.outage, Capacity: f.capacity, Deadline: f.deadline, Seed: f.seed}
	var results []herd.Result
	for _, s := range strategies(f.maxBackoff) {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := herd.Simulate(ctx, cfg, s)
		if err != nil {
			return fmt.Errorf("simulating %s: %w", s.Name, err)
		}
		results = append(results, r)
	}
	capacity := "no limit"
	if f.capacity > 0 {
		capacity = fmt.Sprintf("%d calls per 100 ms", f.capacity)
	}
	deadline := "none"
	if f.deadline > 0 {
		deadline = fmtDur(f.deadline)
	}
	fmt.Fprintf(w, "Thundering herd: %d clients fail together during a %s outage; then the server takes %s.\n",
		f.clients, fmtDur(f.outage), capacity)
	fmt.Fprintf(w, "Retry deadline %s, maximum_backoff %s, seed %d. Times are since the outage began.\n\n",
		deadline, fmtDur(f.maxBackoff), f.seed)
	if err := herd.Table(w, results); err != nil {
		return err
	}
	fmt.Fprintln(w, "\npeak/100ms: most calls in one tick; retry peak: most retries in one tick (the synchronized waves jitter breaks up).")

	if f.contention {
		n := f.clients
		if !f.clientsSet {
			n = herd.DefaultContentionClients
		}
		ccfg := herd.ContentionConfig{Clients: n, Deadline: f.deadline, Seed: f.seed}
		cs, err := conflictStrategies(f.maxBackoff, herd.DefaultService)
		if err != nil {
			return err
		}
		var cres []herd.ContentionResult
		for _, s := range cs {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := herd.SimulateContention(ctx, ccfg, s)
			if err != nil {
				return fmt.Errorf("simulating contention with %s: %w", s.Name, err)
			}
			cres = append(cres, r)
		}
		fmt.Fprintf(w, "\nContention: %d clients each add a binding to ONE policy by read-modify-write (%s from read to write);\n",
			n, fmtDur(cres[0].Config.Service))
		fmt.Fprintf(w, "a write with a stale etag fails ABORTED and the whole read-modify-write is rerun after the wait.\n")
		fmt.Fprintf(w, "scaled is the Updater's default (interceptor.ScaledConflicts); spread is interceptor.SpreadConflicts and documented\n")
		fmt.Fprintf(w, "interceptor.DocumentedConflicts, each chosen with policy.WithConflictBackoff.\n\n")
		if err := herd.ContentionTable(w, cres); err != nil {
			return err
		}
		if f.seeds > 1 {
			if err := contentionSeeds(ctx, w, ccfg, f); err != nil {
				return err
			}
		}
	}

	if f.plot != "" {
		if err := herd.Plot(f.plot, results); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nwrote %s\n", f.plot)
	}
	return nil
}

// contentionSeeds writes, per strategy, a summary of the contention runs
// of f.seeds seeds from f.seed on: writes per client (mean over seeds and
// the worst seed), the most clients that gave up on one seed, the latest
// landing, and the median over seeds of each run's p50.
func contentionSeeds(ctx context.Context, w io.Writer, cfg herd.ContentionConfig, f *simulateFlags) error {
	fmt.Fprintf(w, "\nOver %d seeds (%d..%d), %d clients:\n\n", f.seeds, f.seed, f.seed+uint64(f.seeds)-1, cfg.Clients)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\twrites/client\tworst seed\tgave up (most)\tall landed (latest)\tp50 (median)\t")
	cs, err := conflictStrategies(f.maxBackoff, herd.DefaultService)
	if err != nil {
		return err
	}
	for _, s := range cs {
		var mean, worst float64
		var gaveUp int
		var last time.Duration
		var p50s []time.Duration
		for i := range f.seeds {
			if err := ctx.Err(); err != nil {
				return err
			}
			c := cfg
			c.Seed = f.seed + uint64(i)
			r, err := herd.SimulateContention(ctx, c, s)
			if err != nil {
				return fmt.Errorf("simulating contention with %s: %w", s.Name, err)
			}
			per := float64(r.Writes) / float64(c.Clients)
			mean += per / float64(f.seeds)
			worst = max(worst, per)
			gaveUp = max(gaveUp, r.GaveUp)
			last = max(last, r.AllLanded)
			p50s = append(p50s, r.P50)
		}
		slices.Sort(p50s)
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d\t%.1fs\t%.2fs\t\n", s.Name, mean, worst, gaveUp, last.Seconds(), p50s[len(p50s)/2].Seconds())
	}
	return tw.Flush()
}
