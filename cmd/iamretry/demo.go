package main

// The runner of `iamretry demo`: the command and its flags, then each step
// of the story in turn (its header, its events as they happen, the calls
// the fake answered, the policies it shows, its result) and the summary.
// The story is demo_story.go, the clients it calls through demo_wiring.go;
// the renderers (render_*.go) draw the events, and the tests over
// `demo --json` (demo_test.go) check what each step claims.

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
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
0 when every step ran to its end. --json prints the same events as JSON
lines (with the fake's call log and the policies each step leaves); the
tests of cmd/iamretry check from it that each call ends as the guidance
says. Time
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
// summary, how many calls it reported, and the policies to show once it is
// over. What each call should end with is no part of it: the tests over
// `demo --json` (demo_test.go) hold that.
type stepState struct {
	n       int
	outcome string
	calls   int // the calls the story made and reported (returned)
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
	var err error
	// A thread of the clock: the Updaters' waits run on goroutines the step
	// starts with its context.
	d.clk.Go(ctx, 1, func(ctx context.Context, _ int) { err = st.run(ctx, d, s) })
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
		Outcome: s.outcome, OK: err == nil && s.calls > 0}
	d.ev.emit(r)
	return r
}

// returned reports what a call of the story returned.
func (d *demo) returned(s *stepState, who, method string, err error) {
	ev := returnedEvent{Step: s.n, Who: who, Method: method, Code: codeName(status.Code(err))}
	if err != nil {
		ev.Error = err.Error()
	}
	s.calls++
	d.ev.emit(ev)
}

func (d *demo) note(step int, text string) { d.ev.emit(noteEvent{Step: step, Text: text}) }

// storySteps returns the steps the demo runs; tests replace it.
var storySteps = demoSteps

// bindingsOf is p's bindings as a policyEvent shows them.
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
