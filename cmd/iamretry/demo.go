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
     server's error;
  7. a service account created moments ago is granted a role at once: the
     grant is refused INVALID_ARGUMENT until the account propagates; an
     Updater with interceptor.WithRetryNotFound lands it after the window,
     one without the opt-in gets the refusal at once.

It prints a timeline (time, call, attempt, code and HTTP status, retry
class, decision and wait), what each call returned, and a summary, and exits
0 only if every call ended as the guidance says. --json prints the same
events as JSON lines (with the fake's call log and the policies each step
leaves); the tests of cmd/iamretry check each step's claims from it. Time
is virtual by default, so the real schedule shows and the demo ends in a
second; --real-time waits it out on the wall clock.`

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
			fs.BoolVar(&f.json, "json", false, "print the events as JSON lines (one object a line, with a \"type\") instead of text")
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
	ev    *stream
	clk   storyClock
	start time.Time
	fake  *iamtest.Server

	mu   sync.Mutex
	step int

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

// stepState is what a step reports beside its events: the outcome for the
// summary, whether each call it made ended as the guidance says, and the
// policies to show once it is over.
type stepState struct {
	n       int
	outcome string
	calls   int  // the calls the story made and reported (returned)
	wrong   bool // one of them ended otherwise than the guidance says
	show    []shownPolicy
}

// shownPolicy is a policy a step shows when it is over.
type shownPolicy struct {
	resource string
	viaAdmin bool // a service account's policy: the admin API holds it
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

	var r renderer = textRenderer{w: cio.stdout, color: isTerminal(cio.stdout)}
	if f.json {
		r = jsonRenderer{w: cio.stdout}
	}
	d := &demo{flags: f, ev: newStream(r)}
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

	d.ev.emit(demoStart{Seed: f.seed, RTTMS: f.rtt.Milliseconds(), RealTime: f.realTime, rtt: f.rtt})
	sched := documentedSchedule()
	d.ev.emit(sched)
	for _, row := range sched.Rows {
		d.ev.emit(row)
	}

	var results []stepResult
	allOK := true
	for _, st := range storySteps() {
		r := d.runStep(ctx, st)
		results = append(results, r)
		allOK = allOK && r.OK
		if ctx.Err() != nil {
			break
		}
	}
	d.ev.emit(summary{OK: allOK, Steps: results})
	if d.meter != nil {
		m, err := d.meter.collect(ctx)
		if err != nil {
			return err
		}
		d.ev.emit(m)
	}
	if err := d.ev.err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if !allOK {
		return errSilentFailure
	}
	return nil
}

// runStep runs one step and reports it: its header, then (as they happen)
// its attempts, notes and returns, then the calls the fake answered, the
// policies the step shows, and its result.
func (d *demo) runStep(ctx context.Context, st demoStep) stepResult {
	d.mu.Lock()
	d.step = st.n
	d.mu.Unlock()
	d.fake.ResetFaults()
	d.fake.ResetCalls()
	d.ev.emit(stepHeader{Step: st.n, Title: st.title, Guidance: st.guidance})
	s := &stepState{n: st.n}
	start := d.clk.Now()
	err := st.run(ctx, d, s)
	took := d.clk.Now().Sub(start)
	calls := d.fake.Calls()
	for _, c := range calls {
		d.ev.emit(serverCall{Step: st.n, Method: string(c.Method), Resource: c.Resource, Code: codeName(c.Code), AtMS: c.Time.Sub(d.start).Milliseconds()})
	}
	if err != nil {
		d.note(st.n, "the step could not run to its end: "+err.Error())
		s.outcome = "did not run to its end"
	}
	for _, p := range s.show {
		d.ev.emit(policyEvent{Step: st.n, Resource: p.resource, Bindings: bindingsOf(d.peekPolicy(ctx, p.resource, p.viaAdmin))})
	}
	r := stepResult{Step: st.n, Story: st.story, Calls: len(calls), TookMS: took.Milliseconds(), took: took,
		Outcome: s.outcome, OK: err == nil && s.calls > 0 && !s.wrong}
	d.ev.emit(r)
	return r
}

// returned reports what a call of the story returned, beside the code the
// guidance says it ends with.
func (d *demo) returned(s *stepState, who, method string, err error, want codes.Code) {
	got := status.Code(err)
	ev := returnedEvent{Step: s.n, Who: who, Method: method, Code: codeName(got), Want: codeName(want), ok: got == want}
	if err != nil {
		ev.Error = err.Error()
	}
	s.calls++
	s.wrong = s.wrong || !ev.ok
	d.ev.emit(ev)
}

func (d *demo) note(step int, text string) { d.ev.emit(noteEvent{Step: step, Text: text}) }

// peekPolicy reads resource's policy from the fake to show it, through the
// fake's own connection (no interceptor, no round trip on the story's
// clock), with the admin API for a service account; nil on an error.
func (d *demo) peekPolicy(ctx context.Context, resource string, viaAdmin bool) *iampb.Policy {
	req := &iampb.GetIamPolicyRequest{Resource: resource}
	var p *iampb.Policy
	if viaAdmin {
		p, _ = adminpb.NewIAMClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	} else {
		p, _ = iampb.NewIAMPolicyClient(d.fake.Conn()).GetIamPolicy(ctx, req)
	}
	return p
}

func bindingsOf(p *iampb.Policy) []bindingRecord {
	out := []bindingRecord{}
	for _, b := range p.GetBindings() {
		out = append(out, bindingRecord{Role: b.GetRole(), Members: b.GetMembers(), Condition: b.GetCondition().GetExpression()})
	}
	return out
}

// since is the time since the demo started, on its clock.
func (d *demo) since() time.Duration { return d.clk.Now().Sub(d.start) }

func (d *demo) currentStep() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.step
}

// observer reports every failed attempt with the Retrier's decision.
func (d *demo) observer(who string) func(context.Context, interceptor.Attempt) {
	return func(_ context.Context, a interceptor.Attempt) {
		if a.Reason == interceptor.Succeeded {
			return // the wire reports the attempt that succeeded
		}
		d.ev.emit(failedAttempt(d.currentStep(), d.since(), who, a))
	}
}

// wire is the innermost interceptor: it models the network (each call takes
// the round-trip time on the story's clock) and reports the attempts that
// succeed; the observer reports the ones that fail.
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
			d.ev.emit(okAttempt(d.currentStep(), d.since(), who, method, n))
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
	info := scheduleInfo{InitialMS: b.Initial.Milliseconds(), Multiplier: b.Multiplier,
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
		r := scheduleRow{Retry: n, BaseMS: base.Milliseconds(),
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
			story:    "transient failures, then OK",
			guidance: "The guidance: retry 500, 502, 503 and 504 with truncated exponential backoff with jitter.",
			run:      stepTransient,
		},
		{
			n:        2,
			title:    "A new service account is not visible yet: NOT_FOUND, retried on request",
			story:    "new account NOT_FOUND, opted in",
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
			story:    "five writers race, all land",
			guidance: "The guidance: on 409 ABORTED (a concurrent change) retry the whole read-modify-write, never the write alone.",
			run:      stepContention,
		},
		{
			n:        5,
			title:    "A write commits but its answer is lost",
			story:    "lost answer: rerun finds it done",
			guidance: "A rerun of the read-modify-write must not apply a change twice: it reads first, and finds its work done.",
			run:      stepLostAnswer,
		},
		{
			n:        6,
			title:    "An outage longer than the retry deadline",
			story:    "outage outlasts the deadline",
			guidance: "The guidance: keep retrying until a deadline, then give up with the error the server sent.",
			run:      stepOutage,
		},
		{
			n:     7,
			title: "Create an account, grant it a role at once",
			story: "grant to a new account, opted in",
			guidance: "IAM is eventually consistent: until a new account propagates, a grant to it is refused " +
				"INVALID_ARGUMENT \"Service account ... does not exist.\" An Updater with interceptor.WithRetryNotFound " +
				"reruns the read-modify-write until it is visible, within the deadline; without the opt-in the refusal " +
				"returns at once.",
			run: stepGrantNewAccount,
		},
	}
}

var demoPolicyResource = "projects/demo-project/topics/orders"

// callsOf counts the calls to m among calls that were answered code.
func callsOf(calls []iamtest.Call, m iamtest.Method, code codes.Code) int {
	n := 0
	for _, c := range calls {
		if c.Method == m && c.Code == code {
			n++
		}
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// step 1.
func stepTransient(ctx context.Context, d *demo, s *stepState) error {
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Internal)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.DeadlineExceeded)
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	d.returned(s, "", iamtest.MethodGetIamPolicy.String(), err, codes.OK)
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy)-1, "retry"))
	s.outcome = strings.Replace(s.outcome, "retrys", "retries", 1)
	return nil
}

// step 2.
func stepPropagation(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetPropagationReads(2)
	defer d.fake.SetPropagationReads(0)
	sa, err := d.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/demo-project", AccountId: "deployer",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "deployer"},
	})
	if err != nil {
		return fmt.Errorf("CreateServiceAccount: %w", err)
	}
	d.account = sa
	d.note(s.n, "created "+sa.Email+"; reading it back at once, with gax.WithGRPCOptions(interceptor.RetryNotFound())")
	_, err = d.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name},
		gax.WithGRPCOptions(interceptor.RetryNotFound()))
	d.returned(s, "", iamtest.MethodGetServiceAccount.String(), err, codes.OK)
	notFound := callsOf(d.fake.Calls(), iamtest.MethodGetServiceAccount, codes.NotFound)
	s.outcome = fmt.Sprintf("%s after %d NOT_FOUND", codeName(status.Code(err)), notFound)
	return nil
}

// step 3.
func stepUnsafe(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	d.fake.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.Unavailable)
	_, err := d.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: d.account.Name})
	d.returned(s, "", iamtest.MethodCreateServiceAccountKey.String(), err, codes.Unavailable)
	d.note(s.n, "why: each call mints a new private key. Had the first one committed and only its answer been lost, "+
		"a retry would leave a live key that nobody holds. The caller decides: list the keys, create again if none was made.")
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodCreateServiceAccountKey), "call"))
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
		u, err := d.newUpdater(pc, d.retrierOptions(who, d.flags.seed+100+uint64(i))...)
		if err != nil {
			return err
		}
		updaters[i] = u
	}
	d.note(s.n, fmt.Sprintf("%d writers, each with its own policy.Updater, add roles/viewer for themselves to %s at the same moment; %s was there before",
		writers, demoPolicyResource, owner))
	errs := make([]error, writers+1)
	d.clk.Go(ctx, writers, func(ctx context.Context, i int) {
		_, errs[i] = updaters[i].Update(ctx, demoPolicyResource, policy.AddBinding("roles/viewer", writerMember(i)))
	})
	landed := 0
	for i := 1; i <= writers; i++ {
		d.returned(s, fmt.Sprintf("writer-%d", i), policy.UpdateMethod, errs[i], codes.OK)
		if errs[i] == nil {
			landed++
		}
	}
	calls := d.fake.Calls()
	aborted := callsOf(calls, iamtest.MethodSetIamPolicy, codes.Aborted)
	d.note(s.n, fmt.Sprintf("the server saw %s and %s; %s ABORTED",
		plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy), "read"), plural(d.fake.CountCalls(iamtest.MethodSetIamPolicy), "write"), plural(aborted, "write")))
	s.show = append(s.show, shownPolicy{resource: demoPolicyResource})
	s.outcome = fmt.Sprintf("%d/%d landed after %s", landed, writers, plural(aborted, "conflict"))
	return nil
}

func writerMember(i int) string { return fmt.Sprintf("user:writer-%d@example.com", i) }

// step 5.
func stepLostAnswer(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	// The service account's own policy, through the admin API's hand-written
	// GetIamPolicy/SetIamPolicy (policy.FromAdmin).
	u, err := d.newUpdater(policy.FromAdmin(d.admin), d.retrierOptions("", d.flags.seed+200)...)
	if err != nil {
		return err
	}
	member := "user:alice@example.com"
	const role = "roles/iam.serviceAccountUser"
	d.fake.LoseNextAnswers(iamtest.MethodAdminSetIamPolicy, 1)
	d.note(s.n, "granting "+member+" "+role+" on "+d.account.Email+" (the admin API holds its policy); "+
		"the fake will commit the write and then answer UNAVAILABLE")
	_, err = u.Update(ctx, d.account.Name, policy.AddBinding(role, member))
	d.returned(s, "", policy.UpdateMethod, err, codes.OK)
	s.show = append(s.show, shownPolicy{resource: d.account.Name, viaAdmin: true})
	s.outcome = fmt.Sprintf("%s in %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodAdminSetIamPolicy), "write"))
	return nil
}

// step 6.
func stepOutage(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	defer d.fake.ClearOutage(iamtest.AnyMethod)
	d.note(s.n, "the fake is down for longer than the deadline; the retry deadline is "+fmtDur(interceptor.DefaultDeadline)+" from the first failure")
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	d.returned(s, "", iamtest.MethodGetIamPolicy.String(), err, codes.Unavailable)
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy), "attempt"))
	return nil
}

// demoPropagation is how long step 7's new account stays invisible.
const demoPropagation = 5 * time.Second

// step 7 (issue 14): grant a role to a service account created moments ago.
func stepGrantNewAccount(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetPropagationDelay(demoPropagation)
	defer d.fake.SetPropagationDelay(0)
	sa, err := d.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/demo-project", AccountId: "publisher",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "publisher"},
	})
	if err != nil {
		return fmt.Errorf("CreateServiceAccount: %w", err)
	}
	member, role := "serviceAccount:"+sa.Email, "roles/pubsub.publisher"
	d.note(s.n, fmt.Sprintf("created %s; IAM will not see it for %s (iamtest.SetPropagationDelay). Granting it %s on %s at once, "+
		"first with an Updater without the opt-in, then with one made with interceptor.WithRetryNotFound()",
		sa.Email, fmtDur(demoPropagation), role, demoPolicyResource))

	plain, err := d.updater(ctx, "plain", 300)
	if err != nil {
		return err
	}
	_, err = plain.Update(ctx, demoPolicyResource, policy.AddBinding(role, member))
	d.returned(s, "plain", policy.UpdateMethod, err, codes.InvalidArgument)
	d.note(s.n, "without the opt-in the refusal comes back at once, and its message names the option")

	optIn, err := d.updater(ctx, "opt-in", 310, interceptor.WithRetryNotFound())
	if err != nil {
		return err
	}
	before := callsOf(d.fake.Calls(), iamtest.MethodSetIamPolicy, codes.InvalidArgument)
	_, err = optIn.Update(ctx, demoPolicyResource, policy.AddBinding(role, member))
	d.returned(s, "opt-in", policy.UpdateMethod, err, codes.OK)
	s.show = append(s.show, shownPolicy{resource: demoPolicyResource})
	refused := callsOf(d.fake.Calls(), iamtest.MethodSetIamPolicy, codes.InvalidArgument) - before
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(refused, "refusal"))
	return nil
}

// updater is a policy.Updater of its own, on a client of its own, for who.
func (d *demo) updater(ctx context.Context, who string, seed uint64, opts ...interceptor.Option) (*policy.Updater, error) {
	pc, _, err := d.clients(ctx, who, d.flags.seed+seed, false)
	if err != nil {
		return nil, err
	}
	return d.newUpdater(pc, append(d.retrierOptions(who, d.flags.seed+seed+1), opts...)...)
}

// newUpdater is a policy.Updater over pc on a Retrier of its own, built from
// opts: the demo gives each writer its own jitter stream, apart from its
// client's interceptor.
func (d *demo) newUpdater(pc policy.Client, opts ...interceptor.Option) (*policy.Updater, error) {
	r, err := interceptor.New(opts...)
	if err != nil {
		return nil, err
	}
	return policy.NewUpdater(pc, r)
}
