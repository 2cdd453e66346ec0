package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

const demoLong = `
Acts out Google's IAM retry guidance ("Retry failed requests") against an
in-process fake IAM server (no credentials, no network), through the real
cloud.google.com/go clients with the iamretry interceptor and policy updater:

  0. the documented backoff schedule for the defaults;
  1. GetIamPolicy meets UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED, then succeeds;
  2. a new service account answers NOT_FOUND while it propagates: retried
     because the call opted in (interceptor.RetryNotFound);
  3. CreateServiceAccountKey fails UNAVAILABLE and is not retried (unsafe);
  4. five writers race to add bindings to one policy: ABORTED conflicts,
     reruns of the read-modify-write, all five land;
  5. a write commits but its answer is lost: the rerun finds it done;
  6. an outage longer than the retry deadline: the call gives up with the
     server's error.

It prints a timeline (time, method, attempt, code, HTTP status, retry class,
decision, wait) and a summary, and exits 0 only if every step behaved as the
guidance says. Time is virtual by default, so the real schedule shows and the
demo ends in a second; --real-time waits it out on the wall clock.`

type demoFlags struct {
	json     bool
	realTime bool
	seed     uint64
	rtt      time.Duration
	metrics  bool
}

func demoCommand() *command {
	return &command{
		name:    "demo",
		summary: "act out the IAM retry guidance against a built-in fake (make demo)",
		usage:   "iamretry demo [--json] [--real-time] [--seed N] [--metrics]",
		long:    demoLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &demoFlags{}
			fs.BoolVar(&f.json, "json", false, "print the timeline and summary as JSON lines instead of text")
			fs.BoolVar(&f.realTime, "real-time", false, "wait on the wall clock (the demo then takes about a minute)")
			fs.Uint64Var(&f.seed, "seed", 1, "seed of the jitter's random fractions (the story is the same for equal seeds)")
			fs.DurationVar(&f.rtt, "rtt", 50*time.Millisecond, "round-trip time of every call to the fake")
			fs.BoolVar(&f.metrics, "metrics", false, "print the OpenTelemetry instruments' values at the end (read through a ManualReader)")
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q; demo takes flags only", args[0])
				}
				if err := checkNonNegative("rtt", f.rtt); err != nil {
					return err
				}
				return runDemo(ctx, cio, f)
			}
		},
	}
}

// demo is one run of the story.
type demo struct {
	flags *demoFlags
	tl    *timeline
	clk   storyClock
	start time.Time
	fake  *iamtest.Server

	mu       sync.Mutex
	step     int
	peeks    int                   // calls the demo made to inspect the fake in the current step
	attempts []interceptor.Attempt // what observers saw in the current step

	// the main clients (thread 0)
	policy  *iamapi.IamPolicyClient
	admin   *admin.IamClient
	closers []func() error

	account *adminpb.ServiceAccount // created in step 2

	meter *demoMeter // --metrics, else nil
}

// demoStep is one step of the story.
type demoStep struct {
	n        int // its number in the story
	title    string
	story    string // for the summary
	guidance string
	run      func(ctx context.Context, d *demo, s *stepState) error
}

// stepState collects what a step checks.
type stepState struct {
	n       int
	checks  []check
	outcome string
}

func (s *stepState) expect(ok bool, format string, args ...any) bool {
	s.checks = append(s.checks, check{What: fmt.Sprintf(format, args...), OK: ok})
	return ok
}

func runDemo(ctx context.Context, cio *cmdIO, f *demoFlags) (err error) {
	// A watchdog, on the wall clock: the demo must never hang a terminal or
	// a CI job. It cancels rather than sets a deadline, because a context
	// deadline is wall-clock time and the demo's calls run on virtual time.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !f.realTime {
		stop := time.AfterFunc(25*time.Second, cancel)
		defer stop.Stop()
	}

	d := &demo{flags: f, tl: &timeline{w: cio.stdout, json: f.json, color: !f.json && isTerminal(cio.stdout)}}
	if f.realTime {
		d.clk = wallClock{interceptor.WallClock()}
	} else {
		d.clk = newSimClock(time.Now())
	}
	d.start = d.clk.Now()
	if f.metrics {
		d.meter = newDemoMeter()
	}
	if d.fake, err = iamtest.New(iamtest.WithClock(d.clk), iamtest.WithSeed(int64(f.seed))); err != nil {
		return err
	}
	defer d.fake.Close()
	defer func() {
		for i := len(d.closers) - 1; i >= 0; i-- {
			if cerr := d.closers[i](); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	if d.policy, d.admin, err = d.clients(ctx, "", f.seed, true); err != nil {
		return err
	}

	clock := "virtual time: the real schedule, shown in a second; --real-time waits it out"
	if f.realTime {
		clock = "real time"
	}
	d.tl.text(d.tl.paint(cBold, "iamretry demo") + ": Google's IAM retry guidance, acted out against an in-process fake IAM server\n" +
		d.tl.paint(cDim, "("+clock+"; every call takes a "+fmtDur(f.rtt)+" round trip)") + "\n\n")
	d.tl.schedule(documentedSchedule())

	var results []stepResult
	allOK := true
	for _, st := range storySteps() {
		r := d.runStep(ctx, st.n, st)
		results = append(results, r)
		allOK = allOK && r.OK
		if ctx.Err() != nil {
			break
		}
	}
	d.tl.summary(summary{OK: allOK, Steps: results})
	if d.meter != nil {
		if err := d.meter.print(ctx, cio.stdout); err != nil {
			return err
		}
	}
	if d.tl.err != nil {
		return d.tl.err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if !allOK {
		return errSilentFailure
	}
	return nil
}

func (d *demo) runStep(ctx context.Context, n int, st demoStep) stepResult {
	d.mu.Lock()
	d.step = n
	d.peeks = 0
	d.attempts = nil
	d.mu.Unlock()
	d.fake.ResetFaults()
	d.fake.ResetCalls()
	d.tl.step(stepHeader{Step: n, Title: st.title, Guidance: st.guidance})
	s := &stepState{n: n}
	start := d.clk.Now()
	err := st.run(ctx, d, s)
	took := d.clk.Now().Sub(start)
	if err != nil {
		s.expect(false, "the step ran to its end (%v)", err)
	}
	ok := len(s.checks) > 0
	for _, c := range s.checks {
		ok = ok && c.OK
	}
	r := stepResult{Type: "result", Step: n, Story: st.story, Calls: d.fake.CountCalls(iamtest.AnyMethod) - d.peekCount(),
		TookMS: took.Milliseconds(), took: took, Outcome: s.outcome, OK: ok, Checks: s.checks}
	d.tl.result(r)
	return r
}

// peekPolicy reads resource's policy from the fake for a step's checks,
// through the fake's own connection (no interceptor, no round trip on the
// story's clock), with the admin API for a service account. The read is not
// counted among the step's calls.
func (d *demo) peekPolicy(ctx context.Context, resource string, viaAdmin bool) *iampb.Policy {
	d.mu.Lock()
	d.peeks++
	d.mu.Unlock()
	req := &iampb.GetIamPolicyRequest{Resource: resource}
	var p *iampb.Policy
	if viaAdmin {
		p, _ = adminpb.NewIAMClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	} else {
		p, _ = iampb.NewIAMPolicyClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	}
	return p // nil on an error: the checks then fail
}

func (d *demo) peekCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peeks
}

// since is the time since the demo started, on its clock.
func (d *demo) since() time.Duration { return d.clk.Now().Sub(d.start) }

func (d *demo) currentStep() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.step
}

// stepAttempts returns what the observers saw so far in this step.
func (d *demo) stepAttempts() []interceptor.Attempt {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]interceptor.Attempt(nil), d.attempts...)
}

// observer prints every failed attempt with the Retrier's decision, and
// records it for the step's checks.
func (d *demo) observer(who string) func(context.Context, interceptor.Attempt) {
	return func(_ context.Context, a interceptor.Attempt) {
		if a.Reason == interceptor.Succeeded {
			return // the timeline shows the failed attempts; the step's result shows the success
		}
		d.mu.Lock()
		d.attempts = append(d.attempts, a)
		step := d.step
		d.mu.Unlock()
		d.tl.attempt(newAttemptRow(step, d.since(), who, a.Method, a.N, status.Code(a.Err), a.Class.String(), decision(a), a.Wait))
	}
}

func decision(a interceptor.Attempt) string {
	switch {
	case a.Reason == interceptor.Retry && a.Method == policy.UpdateMethod:
		return "rerun read-modify-write"
	case a.Reason == interceptor.Retry:
		return "retry"
	case a.Reason == interceptor.NotRetryable && a.Class == iamcodes.Conflict:
		return "to the caller: a conflict"
	}
	return "give up: " + a.Reason.String()
}

// wire is the innermost interceptor: it models the network (each call takes
// the round-trip time on the story's clock) and prints the attempts that
// succeed; the observer prints the ones that fail.
func (d *demo) wire(who string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if err := d.clk.Sleep(ctx, d.flags.rtt); err != nil {
			return status.FromContextError(err).Err()
		}
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			n := 1
			if md, ok := metadata.FromOutgoingContext(ctx); ok {
				if v := md.Get(interceptor.AttemptMetadataKey); len(v) > 0 {
					if k, perr := strconv.Atoi(v[0]); perr == nil {
						n = k + 1
					}
				}
			}
			d.tl.attempt(newAttemptRow(d.currentStep(), d.since(), who, method, n, codes.OK, "", "ok", 0))
		}
		return err
	}
}

// retrierOptions are the options of every Retrier in the story: the story's
// clock, a seeded random source of its own, and the observer.
func (d *demo) retrierOptions(who string, seed uint64) []interceptor.Option {
	opts := []interceptor.Option{
		interceptor.WithClock(d.clk),
		interceptor.WithRandom(seededRandom(seed)),
		interceptor.WithObserver(d.observer(who)),
	}
	if d.meter != nil {
		opts = append(opts, interceptor.WithMeterProvider(d.meter.mp))
	}
	return opts
}

// clients builds an IAMPolicy client and, withAdmin, an IAM admin client on
// the fake, with a Retrier of their own as a dial option.
func (d *demo) clients(ctx context.Context, who string, seed uint64, withAdmin bool) (*iamapi.IamPolicyClient, *admin.IamClient, error) {
	r, err := interceptor.New(d.retrierOptions(who, seed)...)
	if err != nil {
		return nil, nil, err
	}
	opts := append(d.fake.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), d.wire(who))))
	pc, err := iamapi.NewIamPolicyClient(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	d.closers = append(d.closers, pc.Close)
	// Retry at one layer: GAPIC clients retry some methods themselves
	// through gax, on real timers; over the interceptor every gax attempt
	// would run the interceptor's whole schedule again. DisableGAXRetries
	// leaves the retrying to the interceptor (and the updater) alone.
	if err := interceptor.DisableGAXRetries(pc.CallOptions); err != nil {
		return nil, nil, err
	}
	if !withAdmin {
		return pc, nil, nil
	}
	ac, err := admin.NewIamClient(ctx, opts...)
	if err != nil {
		return nil, nil, err
	}
	d.closers = append(d.closers, ac.Close)
	if err := interceptor.DisableGAXRetries(ac.CallOptions); err != nil { // retry at one layer, as above
		return nil, nil, err
	}
	return pc, ac, nil
}

// seededRandom is a random source for WithRandom: seeded, so the story is
// the same on every run, and safe for concurrent use.
func seededRandom(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x1a3e7))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}

// documentedSchedule computes step 0 from the defaults themselves.
func documentedSchedule() scheduleInfo {
	b := interceptor.DefaultBackoff()
	deadline := interceptor.DefaultDeadline
	almost1 := math.Nextafter(1, 0)
	info := scheduleInfo{Type: "schedule_info", InitialMS: b.Initial.Milliseconds(), Multiplier: b.Multiplier,
		MaxBackoffMS: b.Max.Milliseconds(), DeadlineMS: deadline.Milliseconds(),
		deadline: deadline, max: b.Max, initial: b.Initial}
	nb := b
	nb.Jitter = interceptor.NoJitter
	var soonest time.Duration // the earliest the waits so far can end
	info.MaxAttempts = 0
	for n := 0; ; n++ {
		base := nb.Delay(n, 0)
		lo, hi := b.Delay(n, 0), b.Delay(n, almost1)
		hi = hi.Truncate(time.Millisecond) // [lo, hi] shown to the millisecond: hi < lo+1s
		r := scheduleRow{Type: "schedule", Retry: n, BaseMS: base.Milliseconds(),
			JitterMin: (lo - base).Milliseconds(), JitterMax: (hi - base).Milliseconds(),
			WaitMin: lo.Milliseconds(), WaitMax: hi.Milliseconds(), Truncated: lo == hi && base == b.Max,
			base: base, jitterMin: lo - base, jitterMax: hi - base + time.Millisecond, waitMin: lo, waitMax: hi}
		if r.Truncated {
			r.jitterMax = 0
		}
		info.Rows = append(info.Rows, r)
		if info.MaxAttempts == 0 && soonest+lo > deadline {
			info.MaxAttempts = n + 1
		}
		soonest += lo
		if r.Truncated && info.MaxAttempts > 0 {
			break
		}
	}
	return info
}

// storySteps returns the steps the demo runs; tests replace it.
var storySteps = demoSteps

// demoSteps is the story.
func demoSteps() []demoStep {
	return []demoStep{
		{
			n:        1,
			title:    "Transient failures are retried with backoff",
			story:    "UNAVAILABLE, INTERNAL, DEADLINE_EXCEEDED, then OK",
			guidance: "The guidance: retry 500, 502, 503 and 504 with truncated exponential backoff with jitter.",
			run:      stepTransient,
		},
		{
			n:        2,
			title:    "A new service account is not visible yet: NOT_FOUND, retried on request",
			story:    "new account NOT_FOUND twice, opted in",
			guidance: "The guidance: IAM is eventually consistent; a 404 right after a create may be retried. Only calls that opt in do.",
			run:      stepPropagation,
		},
		{
			n:        3,
			title:    "CreateServiceAccountKey fails UNAVAILABLE and is not retried",
			story:    "CreateServiceAccountKey not retried",
			guidance: "Only requests that are safe to repeat are retried: each CreateServiceAccountKey mints a new private key.",
			run:      stepUnsafe,
		},
		{
			n:        4,
			title:    "Five writers race to add bindings to one policy",
			story:    "five writers race: conflicts, reruns, all land",
			guidance: "The guidance: on 409 ABORTED (a concurrent change) retry the whole read-modify-write, never the write alone.",
			run:      stepContention,
		},
		{
			n:        5,
			title:    "A write commits but its answer is lost",
			story:    "lost answer: the rerun finds it done",
			guidance: "A rerun of the read-modify-write must not apply a change twice: it reads first, and finds its work done.",
			run:      stepLostAnswer,
		},
		{
			n:        6,
			title:    "An outage longer than the retry deadline",
			story:    "outage outlasts the deadline: gives up",
			guidance: "The guidance: keep retrying until a deadline, then give up with the error the server sent.",
			run:      stepOutage,
		},
	}
}

var demoPolicyResource = "projects/demo-project/topics/orders"

// step 1.
func stepTransient(ctx context.Context, d *demo, s *stepState) error {
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Internal)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.DeadlineExceeded)
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	calls := d.fake.Calls()
	s.outcome = "OK after 3 retries"
	if err != nil {
		s.outcome = codeName(status.Code(err))
	}
	s.expect(err == nil, "GetIamPolicy succeeded%s", errSuffix(err))
	s.expect(len(calls) == 4, "the fake saw 4 calls: 3 failures and the success (saw %d)", len(calls))
	expectSchedule(s, d.stepAttempts(), 3)
	return nil
}

// expectSchedule checks that the retries observed waited as the documented
// schedule says: wait(n) in [Delay(n, 0), Delay(n, ~1)] for retry n.
func expectSchedule(s *stepState, as []interceptor.Attempt, retries int) {
	b := interceptor.DefaultBackoff()
	var waits []string
	ok := true
	for _, a := range as {
		if a.Reason != interceptor.Retry {
			continue
		}
		n := a.N - 1
		lo, hi := b.Delay(n, 0), b.Delay(n, math.Nextafter(1, 0))
		ok = ok && lo <= a.Wait && a.Wait <= hi
		waits = append(waits, fmtDur(a.Wait))
	}
	s.expect(ok && len(waits) == retries, "%d waits, each within the documented schedule: %s", retries, strings.Join(waits, ", "))
}

// step 2.
func stepPropagation(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetPropagationReads(2)
	defer d.fake.SetPropagationReads(0)
	sa, err := d.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/demo-project", AccountId: "deployer",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "deployer"},
	})
	if !s.expect(err == nil, "CreateServiceAccount succeeded%s", errSuffix(err)) {
		return nil
	}
	d.account = sa
	d.tl.note(s.n, "created "+sa.Email+"; reading it back at once, with gax.WithGRPCOptions(interceptor.RetryNotFound())")
	got, err := d.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name},
		gax.WithGRPCOptions(interceptor.RetryNotFound()))
	notFound := 0
	for _, c := range d.fake.Calls() {
		if c.Method == iamtest.MethodGetServiceAccount && c.Code == codes.NotFound {
			notFound++
		}
	}
	s.outcome = "visible after 2 retries"
	if err != nil {
		s.outcome = codeName(status.Code(err))
	}
	s.expect(err == nil && got.GetEmail() == sa.Email, "GetServiceAccount found the new account%s", errSuffix(err))
	s.expect(notFound == 2, "it answered NOT_FOUND twice first, and both were retried (NOT_FOUND answers: %d)", notFound)
	s.expect(d.fake.CountCalls(iamtest.MethodGetServiceAccount) == 3, "3 GetServiceAccount calls in all (saw %d)", d.fake.CountCalls(iamtest.MethodGetServiceAccount))
	expectSchedule(s, d.stepAttempts(), 2)
	return nil
}

// step 3.
func stepUnsafe(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	d.fake.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.Unavailable)
	_, err := d.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: d.account.Name})
	s.outcome = codeName(status.Code(err)) + ", not retried"
	var reason interceptor.Reason = 255
	if as := d.stepAttempts(); len(as) > 0 {
		reason = as[len(as)-1].Reason
	}
	d.tl.note(s.n, "why: each call mints a new private key. Had the first one committed and only its answer been lost,")
	d.tl.note(s.n, "a retry would leave a live key that nobody holds. The caller decides: list the keys, create again if none was made.")
	s.expect(status.Code(err) == codes.Unavailable, "the caller got the server's error: %s", codeName(status.Code(err)))
	s.expect(d.fake.CountCalls(iamtest.MethodCreateServiceAccountKey) == 1, "exactly 1 CreateServiceAccountKey call reached the fake, failing before it acted: no key minted (saw %d calls)", d.fake.CountCalls(iamtest.MethodCreateServiceAccountKey))
	s.expect(reason == interceptor.Unsafe, "the interceptor said why: %q", reason.String())
	return nil
}

// step 4.
func stepContention(ctx context.Context, d *demo, s *stepState) error {
	const writers = 5
	owner := "user:owner@example.com"
	if _, err := iampb.NewIAMPolicyClient(d.fake.Conn()).SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: demoPolicyResource,
		Policy: &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/owner", Members: []string{owner}}}}}); err != nil {
		return err
	}
	d.fake.ResetCalls() // the policy was there before the step
	// Five separate Updaters on five clients: one Updater would coalesce
	// the five changes into one read-modify-write, and there would be no
	// race to show.
	updaters := make([]*policy.Updater, writers+1)
	for i := 1; i <= writers; i++ {
		who := fmt.Sprintf("writer-%d", i)
		pc, _, err := d.clients(ctx, who, d.flags.seed+uint64(i), false)
		if err != nil {
			return err
		}
		u, err := policy.NewUpdater(pc, d.retrierOptions(who, d.flags.seed+100+uint64(i))...)
		if err != nil {
			return err
		}
		updaters[i] = u
	}
	d.tl.note(s.n, fmt.Sprintf("%d writers, each with its own policy.Updater, add roles/viewer for themselves to %s at the same moment", writers, demoPolicyResource))
	errs := make([]error, writers+1)
	d.clk.Go(ctx, writers, func(ctx context.Context, i int) {
		_, errs[i] = updaters[i].Update(ctx, demoPolicyResource, policy.AddBinding("roles/viewer", writerMember(i)))
	})
	failed := 0
	for i := 1; i <= writers; i++ {
		if errs[i] != nil {
			failed++
			d.tl.note(s.n, fmt.Sprintf("writer-%d: %v", i, errs[i]))
		}
	}
	var aborted, landed int
	for _, c := range d.fake.Calls() {
		if c.Method != iamtest.MethodSetIamPolicy {
			continue
		}
		switch c.Code {
		case codes.Aborted:
			aborted++
		case codes.OK:
			landed++
		}
	}
	// One owner per call: the Updaters own their retries, and the
	// interceptors beneath them pass the Updaters' calls through. So the
	// server saw the attempts of one schedule: each of the Updaters'
	// read-modify-writes is one GetIamPolicy and one SetIamPolicy, and the
	// interceptors made no attempts of their own.
	attempts, own := writers-failed, 0 // each writer that succeeded made one last, successful attempt
	for _, a := range d.stepAttempts() {
		if a.Method == policy.UpdateMethod {
			attempts++ // a failed attempt (rerun or not)
		} else {
			own++
		}
	}
	reads, writes := d.fake.CountCalls(iamtest.MethodGetIamPolicy), d.fake.CountCalls(iamtest.MethodSetIamPolicy)
	d.tl.note(s.n, fmt.Sprintf("the server saw %d reads and %d writes: the Updaters' %d attempts, one schedule", reads, writes, attempts))
	final := d.peekPolicy(ctx, demoPolicyResource, false)
	viewers, owners := membersOf(final, "roles/viewer"), membersOf(final, "roles/owner")
	all := true
	for i := 1; i <= writers; i++ {
		all = all && viewers[writerMember(i)] == 1
	}
	s.outcome = fmt.Sprintf("%d/%d landed after %d conflicts", writers-failed, writers, aborted)
	s.expect(failed == 0, "every writer's Update succeeded (%d failed)", failed)
	s.expect(aborted > 0, "writers really conflicted: %d SetIamPolicy calls were ABORTED and their read-modify-writes rerun", aborted)
	s.expect(landed == writers, "exactly %d writes landed, one per writer (saw %d)", writers, landed)
	s.expect(reads == attempts && writes == attempts && own == 0,
		"one schedule: %d reads, %d writes, %d Updater attempts; the interceptors passed them through (%d own)", reads, writes, attempts, own)
	s.expect(all && len(viewers) == writers, "the policy holds all %d viewers, each once", writers)
	s.expect(owners[owner] == 1, "the binding that was there before (roles/owner) is still there: no blind overwrite")
	return nil
}

func writerMember(i int) string { return fmt.Sprintf("user:writer-%d@example.com", i) }

// membersOf counts the members of role's unconditional binding in p.
func membersOf(p *iampb.Policy, role string) map[string]int {
	out := map[string]int{}
	for _, b := range p.GetBindings() {
		if b.GetRole() == role && b.GetCondition() == nil {
			for _, m := range b.GetMembers() {
				out[m]++
			}
		}
	}
	return out
}

// step 5.
func stepLostAnswer(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	// The service account's own policy, through the admin API's hand-written
	// GetIamPolicy/SetIamPolicy (policy.FromAdmin).
	u, err := policy.NewUpdater(policy.FromAdmin(d.admin), d.retrierOptions("", d.flags.seed+200)...)
	if err != nil {
		return err
	}
	member := "user:alice@example.com"
	const role = "roles/iam.serviceAccountUser"
	d.fake.LoseNextAnswers(iamtest.MethodAdminSetIamPolicy, 1)
	d.tl.note(s.n, "granting "+member+" "+role+" on "+d.account.Email+"; the fake will commit the write and then answer UNAVAILABLE")
	_, err = u.Update(ctx, d.account.Name, policy.AddBinding(role, member))
	var lost, okWrites, writes int
	for _, c := range d.fake.Calls() {
		if c.Method != iamtest.MethodAdminSetIamPolicy {
			continue
		}
		writes++
		switch {
		case c.Code == codes.Unavailable: // only the lost answer fails here
			lost++
		case c.Code == codes.OK:
			okWrites++
		}
	}
	got := membersOf(d.peekPolicy(ctx, d.account.Name, true), role)[member]
	s.outcome = fmt.Sprintf("granted once in %d writes", writes)
	if err != nil {
		s.outcome = codeName(status.Code(err))
	}
	s.expect(err == nil, "the Update succeeded%s", errSuffix(err))
	s.expect(lost == 1, "one write committed and its answer was lost (saw %d)", lost)
	s.expect(okWrites == 0, "no write after it changed anything: the rerun read the policy and found the grant there (%d more writes landed)", okWrites)
	s.expect(got == 1, "the member holds the role exactly once (%d)", got)
	return nil
}

// step 6.
func stepOutage(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	defer d.fake.ClearOutage(iamtest.AnyMethod)
	d.tl.note(s.n, "the fake is down for longer than the deadline; the retry deadline is "+fmtDur(interceptor.DefaultDeadline)+" from the first failure")
	start := d.clk.Now()
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	took := d.clk.Now().Sub(start)
	as := d.stepAttempts()
	var last interceptor.Attempt
	if len(as) > 0 {
		last = as[len(as)-1]
	}
	want := documentedSchedule().MaxAttempts
	s.outcome = fmt.Sprintf("%s after %d attempts", codeName(status.Code(err)), len(as))
	s.expect(status.Code(err) == codes.Unavailable, "the caller got the server's last error, %s (not a deadline error of its own)", codeName(status.Code(err)))
	s.expect(d.fake.CountCalls(iamtest.MethodGetIamPolicy) == want, "%d attempts, as the schedule allows within the deadline (saw %d)", want, d.fake.CountCalls(iamtest.MethodGetIamPolicy))
	expectSchedule(s, as, want-1)
	s.expect(last.Reason == interceptor.DeadlineReached, "it stopped because the next wait would end past the deadline (%q)", last.Reason.String())
	s.expect(last.Elapsed < interceptor.DefaultDeadline && took < interceptor.DefaultDeadline,
		"it gave up at once, %s after the first failure, not after waiting out the deadline", fmtDur(last.Elapsed))
	return nil
}

// errSuffix says what went wrong, for a check that failed with err.
func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (error: " + err.Error() + ")"
}
