package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/role"
)

const applyLong = `
Converges the IAM allow policies of many resources to what a file says, the
way Google's IAM guidance says to, for CI/CD pipelines: each resource by one
read-modify-write with the policy's etag (rerun from the read after a
concurrent change, 409 ABORTED, or a transient failure, with truncated
exponential backoff and jitter), within --deadline (300 s by default, the
guidance's value for a pipeline). Grants are additive: members the file does
not name are left alone. A grant to a member IAM cannot see yet (a service
account created moments ago) is rerun for up to --member-wait (120 s), and
a resource that answers NOT_FOUND (or 403 "... (or it may not exist)") is
waited for up to --resource-wait (60 s): a typo in a name costs a minute at
most. 0 fails either at once.

The file (YAML, or JSON with the same keys) lists resources, each with
grants to ensure present (add) and absent (remove):

  resources:
    - resource: projects/my-project
      add:
        - {role: roles/viewer, member: "user:alice@example.com"}
        - role: roles/storage.objectViewer
          member: "group:readers@example.com"
          condition: {title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")'}
      remove:
        - {role: roles/editor, member: "user:bob@example.com"}
      bindings:                       # authoritative, per role and condition
        - role: roles/run.admin
          members: ["group:deployers@example.com"]
        - {role: roles/owner, members: ["user:root@example.com"]}
    - resource: //pubsub.googleapis.com/projects/my-project/topics/orders
      add:
        - {role: roles/pubsub.publisher, member: "serviceAccount:ci@my-project.iam.gserviceaccount.com"}

A bindings entry {role, members, condition} owns that role with that
condition (the binding's identity): after apply it holds exactly those
members (deleted: members already there are left in place); members: []
removes it; other roles are untouched. A role and condition owned by
bindings may not also be under that resource's add or remove. Taking the
last roles/owner from a project (by bindings or remove) is refused unless
--allow-owner-removal: that resource fails, nothing is written to it, and
--dry-run shows it refused.

Custom roles and deny rules go in the same file, through the library's
role and deny Updaters (one read-modify-write each, with the etag):

  roles:
    - role: projects/my-project/roles/deployer
      title: Deployer                 # optional; so are description and stage (GA, BETA, ...)
      create_if_absent: true          # CreateRole with these fields; default false
      add_permissions: [run.services.update]
      remove_permissions: [run.services.delete]
      # or permissions: [...], the role's whole list (what export writes)
  deny:
    - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/no-key-creation
      create_if_absent: true          # default false
      add_rules:
        - denied_principals: [principalSet://goog/public:all]
          exception_principals: [principalSet://goog/group/admins@example.com]
          denied_permissions: [iam.googleapis.com/serviceAccountKeys.create]
          exception_permissions: []
          denial_condition: {title: ..., expression: ...}   # optional
          description: ...                                  # optional
      remove_rules: []                # same shape as add_rules

resources, roles and deny are the file's top-level keys. Permissions and
principals are checked by the library's tables before any call; a deleted
role is refused, naming gcloud iam roles undelete; a deny entry with no
changes is skipped; deny reads and changes of one attachment point run one
at a time (IAM v2 allows 5 writes and 5 reads a minute per project).

A resource is any name "iamretry policy" takes (see "iamretry policy -h").
An unknown key anywhere is an error. The whole file is checked before any
call: keys, roles, members (every form IAM documents), a condition's
expression (CEL syntax), project IDs (6 to 30 lowercase letters, digits and
hyphens, or domain-scoped as example.com:my-project, or a project number),
no deleted: member under add, and resource names (one letter off a known
form: "did you mean projects/my-project?"). Every mistake is reported at
once as FILE:LINE, nothing is sent, and the exit code is 2.

--dry-run reads every policy and prints what would change ("nothing to do"
when nothing would); nothing is written. Without it, every resource is
converged, --parallel at a time. Running it again after a success writes
nothing, and says so.

Output: one line a resource (changed, unchanged, failed, with attempts,
writes and time) and a summary on stdout; retries on stderr, and a progress
line there when stderr is a terminal. --json prints one JSON object a line
instead: an event per resource and a summary.

Exit codes: 0 every resource converged (or, with --dry-run, was read);
1 a resource failed (each is named with the server's error); 2 bad input,
nothing sent; 130 after SIGINT, 143 after SIGTERM: no new resource is
started, read-modify-writes under way may finish (each write carries the
etag it read, so none is blind) for --grace and are abandoned after it, what
was done is reported, and a rerun completes the rest.

--dry-run --detailed-exitcode, a plan for a CI gate: 0 nothing would
change, 3 something would, 1 a failure, 2 bad input; the first that applies
of 2, 1, 3, 0 (and 130 or 143 after a signal). Terraform's plan
-detailed-exitcode says "changes pending" with 2; here 2 already means bad
input (as for every iamretry command), so a gate cannot mistake a typo for a
pending change: pending changes are 3. The plan prints as a diff per
resource ("+ ROLE  MEMBER" granted, "- ROLE  MEMBER" revoked); with --json
each resource's event carries it as "changes", one object a grant.

Credentials: Application Default Credentials (gcloud auth
application-default login), or --endpoint HOST:PORT --insecure for a local
fake (iamretry fake-server); --transport rest takes a base URL there.

Example, a pipeline step:
  iamretry apply -f iam/bindings.yaml --dry-run   # on the merge request
  iamretry apply -f iam/bindings.yaml --json > iam-apply.jsonl`

// applyParallelUsage says why --parallel is bounded: IAM's write quotas.
const applyParallelUsage = "how many resources to converge at once; IAM limits requests per project per minute " +
	"(https://cloud.google.com/iam/quotas), and many writers on one project mostly buy quota errors and conflicts, " +
	"so more is rarely faster"

// hiddenUsage starts the usage of a flag that help does not list.
const hiddenUsage = "(hidden) "

type applyFlags struct {
	file          string
	dryRun, json  bool
	detailedExit  bool // --detailed-exitcode: exit 3 when a dry run finds changes
	parallel      int
	deadline      time.Duration
	grace         time.Duration
	retryNotFound bool
	// resourceWait bounds how long a resource's own NOT_FOUND (or IAM's
	// 403 "... (or it may not exist)") is waited out; memberWait how long a
	// grant refused for a member not visible yet is rerun. 0: at once.
	resourceWait, memberWait time.Duration
	allowOwnerRemoval        bool
	transport                string
	endpoint                 string
	insecure                 bool
	restBase                 string // --transport rest with --endpoint: the base URL
	// timeScale runs the retry schedule (backoff, conflict schedule,
	// deadline) that many times faster than the wall clock: for the
	// tests, which run the real binary and must not wait real seconds.
	// Hidden from help: a user has no reason to change the guidance's
	// schedule this way.
	timeScale float64
}

func applyCommand() *command {
	return &command{
		name:    "apply",
		summary: "converge many resources' IAM bindings from a YAML or JSON file (for CI/CD pipelines)",
		usage:   "iamretry apply -f FILE [--dry-run] [--json] [--parallel N] [--deadline D] [--transport grpc|rest] [--endpoint HOST:PORT|URL --insecure]",
		long:    applyLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &applyFlags{}
			file := &fileFlag{p: &f.file}
			fs.Var(file, "f", "the `FILE` of resources and grants, YAML or JSON; - reads stdin (required)")
			fs.Var(file, "file", "the same as -f `FILE`")
			fs.BoolVar(&f.dryRun, "dry-run", false, "read every policy and print what would change; write nothing")
			fs.BoolVar(&f.detailedExit, "detailed-exitcode", false, "with --dry-run: exit 3 when something would change, 0 when nothing would (1 a failure, 2 bad input; see above why not Terraform's 2)")
			fs.BoolVar(&f.json, "json", false, "print one JSON object a line (an event per resource, then a summary) instead of text")
			fs.IntVar(&f.parallel, "parallel", 8, applyParallelUsage)
			fs.DurationVar(&f.deadline, "deadline", 300*time.Second, "how long each resource keeps retrying, from its first failure (the guidance's value for CI/CD; 0: until the command is stopped)")
			fs.DurationVar(&f.resourceWait, "resource-wait", 60*time.Second, "how long a resource's own NOT_FOUND (or IAM's 403 \"... (or it may not exist)\") is waited out, for a resource created moments ago; then it fails with the server's error (0: at once). A typo in a name costs this much at most")
			fs.DurationVar(&f.memberWait, "member-wait", 120*time.Second, "how long a grant refused because its member is not visible yet (a service account created moments ago: \"Service account ... does not exist.\") is rerun; then it fails with the server's error (0: at once)")
			fs.BoolVar(&f.allowOwnerRemoval, "allow-owner-removal", false, "let bindings or remove take the last roles/owner from a project (refused by default: that resource fails and nothing is written to it)")
			fs.BoolVar(&f.retryNotFound, "retry-not-found", true, "--retry-not-found=false is --resource-wait 0 --member-wait 0")
			fs.DurationVar(&f.grace, "grace", 10*time.Second, "after SIGINT or SIGTERM, how long read-modify-writes under way may take to finish before they are abandoned")
			fs.StringVar(&f.transport, "transport", transportGRPC, "grpc, or rest (HTTP/JSON through cloudresourcemanager/v3 and iam/v1, for "+restKinds+")")
			fs.StringVar(&f.endpoint, "endpoint", "", "HOST:PORT of the API to call instead of Google's (e.g. an iamretry fake-server); with --transport rest a base URL such as http://127.0.0.1:8086/")
			fs.BoolVar(&f.insecure, "insecure", false, "with --endpoint: no TLS and no credentials (for a local fake)")
			fs.Float64Var(&f.timeScale, "time-scale", 1, hiddenUsage+"run the retry schedule this many times faster (tests)")
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q; give the file with -f", args[0])
				}
				if err := f.validate(); err != nil {
					return err
				}
				return runApply(ctx, cio, f)
			}
		},
	}
}

// fileFlag is -f and --file: one value, given once under either name.
type fileFlag struct {
	p   *string
	set bool
}

func (v *fileFlag) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *fileFlag) Set(s string) error {
	if v.set {
		return errors.New("the file is given more than once (-f and --file are one flag); give one file")
	}
	v.set = true
	*v.p = s
	return nil
}

func (f *applyFlags) validate() error {
	if f.file == "" {
		return usagef("-f FILE is required: the YAML or JSON file of resources and grants (- reads stdin)")
	}
	if f.detailedExit && !f.dryRun {
		return usagef("--detailed-exitcode reports a plan and needs --dry-run; give --dry-run --detailed-exitcode (without --dry-run apply writes, and exits 0 or 1)")
	}
	if f.parallel < 1 {
		return usagef("--parallel %d: must be at least 1", f.parallel)
	}
	if err := checkNonNegative("deadline", f.deadline); err != nil {
		return err
	}
	if err := checkNonNegative("grace", f.grace); err != nil {
		return err
	}
	if err := checkNonNegative("resource-wait", f.resourceWait); err != nil {
		return err
	}
	if err := checkNonNegative("member-wait", f.memberWait); err != nil {
		return err
	}
	if !f.retryNotFound {
		f.resourceWait, f.memberWait = 0, 0
	}
	if !(f.timeScale >= 1 && f.timeScale <= maxTimeScale) { // also NaN, +Inf
		return usagef("--time-scale %v: must be from 1 to %g", f.timeScale, float64(maxTimeScale))
	}
	c := f.conn()
	if err := c.check(); err != nil {
		return err
	}
	f.restBase = c.restBase
	return nil
}

// readApplyFile opens and parses -f.
// A signal while stdin is still being read (a producer that has not
// finished) returns errStoppedReading at once: the read is left to the
// process's exit.
func readApplyFile(ctx context.Context, f *applyFlags, stdin io.Reader) (*applyFile, error) {
	if f.file == "-" {
		type parsed struct {
			file *applyFile
			err  error
		}
		ch := make(chan parsed, 1)
		go func() {
			file, err := parseApplyFile("<stdin>", stdin, f.transport)
			ch <- parsed{file, err}
		}()
		select {
		case p := <-ch:
			return p.file, p.err
		case <-ctx.Done():
			return nil, errStoppedReading
		}
	}
	fh, err := os.Open(f.file)
	if err != nil {
		return nil, &usageError{msg: fmt.Sprintf("-f: %v", err), hint: "Give the path of a YAML or JSON file; see 'iamretry apply -h' for its form."}
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err == nil && fi.IsDir() {
		return nil, &usageError{msg: fmt.Sprintf("-f %s: is a directory", f.file), hint: "Give the path of a YAML or JSON file; see 'iamretry apply -h' for its form."}
	}
	return parseApplyFile(f.file, fh, f.transport)
}

// applyStdin is where -f - reads; tests may replace it.
var applyStdin io.Reader = os.Stdin

// resState is what one resource's convergence did, as the observer, the
// client and the worker see it.
type resState struct {
	res   *applyResource
	index int // in the file

	mu       sync.Mutex
	started  time.Time
	took     time.Duration
	running  bool
	cancel   context.CancelCauseFunc
	waiting  bool // in a backoff wait between read-modify-writes
	attempts int  // read-modify-writes run (reads, with --dry-run)
	writes   int  // SetIamPolicy calls sent
	// ambiguous: a write failed in a way that may have committed (a lost
	// answer), so a rerun that finds nothing to do did change the policy.
	ambiguous bool
	// lastChanged, lastAdded, lastRemoved: the last run of the mutations;
	// wroteAdded, wroteRemoved: those of the last write that succeeded or
	// may have committed.
	lastChanged              bool
	lastAdded, lastRemoved   int
	wroteAdded, wroteRemoved int
	// waitingSince: when the resource's own NOT_FOUND (notExistResource)
	// and a member's invisibility (notExistMember) were first met, on the
	// run's clock; zero until then.
	waitingSince [2]time.Time
	outcome      string // see the outcome constants
	err          error
	plan         []string     // --dry-run: "+ ROLE  MEMBER", "- ..."
	changes      []planChange // --dry-run: the plan, one object a grant
}

// Outcomes of a resource.
const (
	outChanged     = "changed"
	outUnchanged   = "unchanged"
	outFailed      = "failed"
	outInterrupted = "interrupted"
	outNotStarted  = "not_started"
	outWouldChange = "would_change"
	outNothingToDo = "nothing_to_do"
)

// errStopped is the cause of a resource's context when a signal abandons
// its read-modify-write.
var errStopped = errors.New("stopped by a signal")

// errStoppedReading: a signal came while -f - was still reading stdin.
var errStoppedReading = errors.New("stopped by a signal while reading stdin")

// applyRun is one run of the apply command.
type applyRun struct {
	f        *applyFlags
	file     *applyFile
	byKey    map[string]*resState
	states   []*resState
	stopping atomic.Bool
	stopCh   chan struct{} // closed by stop
	out      *applyOutput
	clock    interceptor.Clock // the Retrier's: --resource-wait and --member-wait are measured on it
}

func runApply(ctx context.Context, cio *cmdIO, f *applyFlags) (err error) {
	file, err := readApplyFile(ctx, f, applyStdin)
	if errors.Is(err, errStoppedReading) {
		sig := "SIGINT"
		if signalExitCode(ctx) == 128+int(syscall.SIGTERM) {
			sig = "SIGTERM"
		}
		fmt.Fprintf(cio.stderr, "iamretry apply: stopped by %s while reading <stdin>; nothing was sent\n", sig)
		return exitCodeError(signalExitCode(ctx))
	}
	var fe *fileErrors
	if errors.As(err, &fe) {
		fmt.Fprintln(cio.stderr, fe.Error())
		n := len(fe.errs)
		plural := "s"
		if n == 1 {
			plural = ""
		}
		fmt.Fprintf(cio.stderr, "iamretry apply: %d error%s in %s; nothing was sent\n", n, plural, fe.file)
		return exitCodeError(exitUsage)
	}
	if err != nil {
		return err
	}
	run := &applyRun{f: f, file: file, byKey: map[string]*resState{}, stopCh: make(chan struct{})}
	for i, r := range file.resources {
		st := &resState{res: r, index: i, outcome: outNotStarted}
		run.states = append(run.states, st)
		run.byKey[r.key] = st
	}
	run.out = newApplyOutput(cio, f)

	// One Retrier for the run: its options live here, in one place, for the
	// connections' interceptor (or RoundTripper) and for the Updater.
	opts := []interceptor.Option{interceptor.WithDeadline(f.deadline), interceptor.WithObserver(run.observe),
		// NOT_FOUND and members not visible yet are always Propagation,
		// retried: the observer ends each wait at its flag's bound (0: at
		// the first failure), so the error names the flag.
		interceptor.WithClassifier(classifyNotExist)}
	run.clock = interceptor.WallClock()
	if f.timeScale != 1 {
		run.clock = newScaledClock(f.timeScale)
	}
	opts = append(opts, interceptor.WithClock(run.clock))
	r, err := interceptor.New(append(opts, interceptor.WithRetryNotFound())...)
	if err != nil {
		return err
	}
	client, closeAll, err := run.connect(ctx, r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeAll(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	sc, closeSidecar, err := run.connectSidecar(ctx, r, opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeSidecar(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	// The work runs on a context of its own: a signal stops new work at
	// once, and in-flight read-modify-writes get --grace to finish.
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	stopped := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-ctx.Done():
		case <-stopped:
			return
		}
		run.stop()
		t := time.NewTimer(f.grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWork(errStopped)
		case <-stopped:
		}
	}()

	start := time.Now()
	run.out.begin(run)
	if f.dryRun {
		// Reads change nothing: a signal abandons them at once (no --grace).
		run.each(ctx, func(ctx context.Context, st *resState) {
			switch st.res.kind {
			case kindRole:
				run.planRole(ctx, sc, st)
			case kindDeny:
				run.planDeny(ctx, sc, st)
			default:
				run.plan(ctx, client, st)
			}
		})
	} else {
		u, err := policy.NewUpdater(client, r) // one Retrier, one budget for the run
		if err != nil {
			close(stopped)
			<-watchDone
			return err
		}
		run.each(work, func(ctx context.Context, st *resState) {
			switch st.res.kind {
			case kindRole:
				run.convergeRole(ctx, sc, st)
			case kindDeny:
				run.convergeDeny(ctx, sc, st)
			default:
				run.converge(ctx, u, st)
			}
		})
	}
	close(stopped)
	<-watchDone
	run.out.summary(run, time.Since(start), ctx)

	if ctx.Err() != nil {
		return exitCodeError(signalExitCode(ctx))
	}
	for _, st := range run.states {
		if st.outcome == outFailed {
			return exitCodeError(exitFailure)
		}
	}
	if err := run.out.err(); err != nil {
		return err
	}
	if f.detailedExit {
		for _, st := range run.states {
			if st.outcome == outWouldChange {
				return exitCodeError(exitChangesPending)
			}
		}
	}
	return nil
}

// signalExitCode is the exit code of a run that a signal stopped, as a
// shell reports a command killed by it: 128 + the signal's number (130 for
// SIGINT, 143 for SIGTERM).
func signalExitCode(ctx context.Context) int {
	if cause := context.Cause(ctx); cause != nil && strings.HasPrefix(cause.Error(), syscall.SIGTERM.String()) {
		return 128 + int(syscall.SIGTERM)
	}
	return 128 + int(syscall.SIGINT)
}

// each runs fn for every resource, --parallel at a time, in the file's
// order; once the run is stopping no new resource starts.
func (run *applyRun) each(ctx context.Context, fn func(context.Context, *resState)) {
	jobs := make(chan *resState)
	var wg sync.WaitGroup
	for range min(run.f.parallel, len(run.states)) {
		wg.Go(func() {
			for st := range jobs {
				rctx, cancel := context.WithCancelCause(context.WithValue(ctx, resStateKey{}, st))
				st.mu.Lock()
				st.cancel, st.running, st.started = cancel, true, time.Now()
				st.mu.Unlock()
				run.out.started(run, st)
				fn(rctx, st)
				cancel(nil)
				st.mu.Lock()
				st.running, st.took = false, time.Since(st.started)
				st.mu.Unlock()
				run.out.finished(run, st)
			}
		})
	}
dispatch:
	for _, st := range run.states {
		select {
		case jobs <- st:
		case <-run.stopCh:
			break dispatch
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	wg.Wait()
}

// stop is the first signal: no new resource starts, a resource waiting to
// rerun its read-modify-write is abandoned now, and one whose call is on
// the wire finishes that read-modify-write (abandoned after --grace).
func (run *applyRun) stop() {
	run.stopping.Store(true)
	close(run.stopCh)
	for _, st := range run.states {
		st.mu.Lock()
		if st.running && st.waiting {
			st.cancel(errStopped)
		}
		st.mu.Unlock()
	}
}

// resStateKey is the context key of the resource a call works for: the
// observer finds the resource of a read (--dry-run) by it.
type resStateKey struct{}

// observe is the Retrier's observer: it counts a resource's attempts, tells
// its retries, ends a wait for a resource or member past --resource-wait or
// --member-wait, and abandons a resource about to wait once the run stops.
func (run *applyRun) observe(ctx context.Context, a interceptor.Attempt) {
	st := run.byKey[a.Resource]
	if a.Method != policy.UpdateMethod && a.Method != role.UpdateMethod && a.Method != deny.UpdateMethod {
		st, _ = ctx.Value(resStateKey{}).(*resState)
		if a.Retrying && st != nil {
			st.mu.Lock()
			run.boundWait(st, a)
			st.mu.Unlock()
		}
		if a.Reason != interceptor.Succeeded {
			run.out.retry("", a)
		}
		return
	}
	if st == nil {
		return
	}
	st.mu.Lock()
	st.attempts = max(st.attempts, a.N)
	if a.Retrying {
		if run.stopping.Load() {
			st.cancel(errStopped)
		} else {
			st.waiting = true
			run.boundWait(st, a)
		}
	}
	st.mu.Unlock()
	if a.Reason != interceptor.Succeeded && !(run.stopping.Load() && !a.Retrying) {
		run.out.retry(st.res.name, a) // (an abandoned one is told by its resource's line)
	}
}

// The two waits for something IAM does not show yet, each bounded by a
// flag of its own.
const (
	notExistResource = iota // the resource's own NOT_FOUND, or 403 "(or it may not exist)": --resource-wait
	notExistMember          // a grant refused for a member not visible yet: --member-wait
)

// boundWait ends the resource's work (its context's cause a
// *waitLimitError) when the retry about to wait is for something that does
// not exist yet and its wait would end past --resource-wait or
// --member-wait, counted from the first such failure. st.mu is held.
func (run *applyRun) boundWait(st *resState, a interceptor.Attempt) {
	if a.Class != iamcodes.Propagation || st.cancel == nil {
		return
	}
	kind, limit, flagName := notExistResource, run.f.resourceWait, "resource-wait"
	if serverCode(a.Err) == codes.InvalidArgument { // "Service account ... does not exist."
		kind, limit, flagName = notExistMember, run.f.memberWait, "member-wait"
	}
	now := run.clock.Now()
	if st.waitingSince[kind].IsZero() {
		st.waitingSince[kind] = now
	}
	if now.Sub(st.waitingSince[kind])+a.Wait > limit {
		st.cancel(&waitLimitError{err: a.Err, flag: flagName, limit: limit, member: kind == notExistMember})
	}
}

// waitLimitError ends a resource whose wait for itself, or for a member,
// to become visible ran past its flag: it is the server's last error, with
// a hint.
type waitLimitError struct {
	err    error // the server's last answer
	flag   string
	limit  time.Duration
	member bool
}

func (e *waitLimitError) Error() string { return e.err.Error() + " " + e.hint() }
func (e *waitLimitError) Unwrap() error { return e.err }

// hint says what was waited for and which flag bounds it.
func (e *waitLimitError) hint() string {
	if e.member {
		return fmt.Sprintf("(the member stayed invisible to IAM past --member-wait %s; check that it exists, or raise --member-wait for one created moments ago)", fmtDur(e.limit))
	}
	return fmt.Sprintf("(the resource did not show up within --resource-wait %s; check its name, that it exists and that the caller may see it, or raise --resource-wait for one created moments ago)", fmtDur(e.limit))
}

// classifyNotExist is the run's classifier: IAM's 403 "... (or it may not
// exist)" on a resource is, like its 404, Propagation (waited out within
// --resource-wait: a project created moments ago answers it); everything
// else is classified as the library does.
func classifyNotExist(_ string, err error) iamcodes.Class {
	if iamcodes.CodeOf(err) == codes.PermissionDenied && strings.Contains(err.Error(), "(or it may not exist)") {
		return iamcodes.Propagation
	}
	return iamcodes.OfError(err)
}

// converge runs the resource's one read-modify-write and records what it did.
func (run *applyRun) converge(ctx context.Context, u *policy.Updater, st *resState) {
	res := st.res
	mut := func(p *iampb.Policy) (bool, error) {
		added, removed, err := res.mutate(p, run.f.allowOwnerRemoval)
		if err != nil {
			return false, err
		}
		st.mu.Lock()
		st.lastChanged, st.lastAdded, st.lastRemoved = added+removed > 0, added, removed
		st.mu.Unlock()
		return added+removed > 0, nil
	}
	_, err := u.Update(ctx, res.key, mut)
	st.mu.Lock()
	changed := st.lastChanged || st.ambiguous
	st.mu.Unlock()
	run.finish(ctx, st, changed, err)
}

// mutate converges p to what the file says of the resource, by the
// library's mutations: removes, adds, then each bindings entry (its
// members added; every other member of that role and condition removed,
// but deleted: ones). It counts the grants added and removed. It refuses
// to take the last roles/owner from a project unless allowOwnerRemoval.
func (res *applyResource) mutate(p *iampb.Policy, allowOwnerRemoval bool) (added, removed int, err error) {
	owners := countOwners(p)
	run := func(m policy.Mutation, n *int) error {
		c, err := m(p)
		if c {
			*n++
		}
		return err
	}
	for _, g := range res.rm {
		if err := run(g.mutation(false), &removed); err != nil {
			return 0, 0, err
		}
	}
	for _, g := range res.add {
		if err := run(g.mutation(true), &added); err != nil {
			return 0, 0, err
		}
	}
	for _, b := range res.bind {
		want := map[string]bool{}
		for _, m := range b.members {
			want[policy.CanonicalMember(m)] = true
			if err := run(policy.AddConditionalBinding(b.role, m, b.cond), &added); err != nil {
				return 0, 0, err
			}
		}
		// Every member of the role under any condition is a candidate: the
		// library's mutation removes it only from the binding of this
		// condition (a binding's identity is its role and condition).
		var drop []string
		for _, pb := range p.GetBindings() {
			if pb.GetRole() != b.role {
				continue
			}
			for _, m := range pb.GetMembers() {
				if !want[policy.CanonicalMember(m)] && !strings.HasPrefix(m, "deleted:") {
					drop = append(drop, m)
				}
			}
		}
		for _, m := range drop {
			if err := run(policy.RemoveConditionalBinding(b.role, m, b.cond), &removed); err != nil {
				return 0, 0, err
			}
		}
	}
	if owners > 0 && countOwners(p) == 0 && res.route.grpcService == projectsService && !allowOwnerRemoval {
		return 0, 0, status.Errorf(codes.FailedPrecondition,
			"refused: this would remove the last roles/owner of %s, and a project without an owner can be managed by no one but its organization's admins; nothing was written to it (give --allow-owner-removal if that is meant)", res.name)
	}
	return added, removed, nil
}

// projectsService is the route of projects.
const projectsService = "google.cloud.resourcemanager.v3.Projects"

// countOwners counts the members of p's roles/owner bindings that are not
// deleted principals.
func countOwners(p *iampb.Policy) int {
	n := 0
	for _, b := range p.GetBindings() {
		if b.GetRole() != "roles/owner" {
			continue
		}
		for _, m := range b.GetMembers() {
			if !strings.HasPrefix(m, "deleted:") {
				n++
			}
		}
	}
	return n
}

// plan reads the resource's policy and works out what converging it would
// change (--dry-run).
func (run *applyRun) plan(ctx context.Context, c policy.Client, st *resState) {
	before, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: st.res.key,
		Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
	st.mu.Lock()
	defer st.mu.Unlock()
	st.attempts = max(st.attempts, 1)
	if err != nil {
		st.outcome, st.err = outFailed, err
		var wl *waitLimitError
		if errors.As(context.Cause(ctx), &wl) {
			st.err = wl
		} else if ctx.Err() != nil { // a signal (the read runs on the signal's context)
			st.outcome = outInterrupted
		}
		return
	}
	after := proto.Clone(before).(*iampb.Policy)
	if _, _, err := st.res.mutate(after, run.f.allowOwnerRemoval); err != nil {
		st.outcome, st.err = outFailed, err
		return
	}
	st.changes = grantChanges(before, after)
	st.plan = make([]string, len(st.changes))
	for i, c := range st.changes {
		st.plan[i] = c.String()
	}
	st.outcome = outNothingToDo
	if len(st.plan) > 0 {
		st.outcome = outWouldChange
	}
}

// planChange is one grant a dry run would add or remove: the plan's
// diff line as an object for --json.
type planChange struct {
	Op        string         `json:"op"` // "add" or "remove"
	Role      string         `json:"role"`
	Member    string         `json:"member"`
	Condition *conditionJSON `json:"condition,omitempty"`
	cond      *expr.Expr
}

// conditionJSON is a condition as --json and export write it.
type conditionJSON struct {
	Title       string `json:"title"`
	Expression  string `json:"expression"`
	Description string `json:"description,omitempty"`
}

// String is the change as the text plan prints it: "+ ROLE  MEMBER".
func (c planChange) String() string {
	op := "+ "
	if c.Op == "remove" {
		op = "- "
	}
	return op + c.Role + conditionSuffix(c.cond) + "  " + c.Member
}

// grantChanges lists the grants that differ between two policies, sorted
// by role, condition and member: "remove" revoked, "add" granted.
func grantChanges(before, after *iampb.Policy) []planChange {
	type g struct {
		role, member string
		cond         *expr.Expr
	}
	grants := func(p *iampb.Policy) map[string]g {
		out := map[string]g{}
		for _, b := range p.GetBindings() {
			for _, m := range b.GetMembers() {
				out[b.GetRole()+conditionSuffix(b.GetCondition())+"  "+m] = g{b.GetRole(), m, b.GetCondition()}
			}
		}
		return out
	}
	was, is := grants(before), grants(after)
	var out []planChange
	add := func(op string, x g) {
		c := planChange{Op: op, Role: x.role, Member: x.member, cond: x.cond}
		if x.cond != nil {
			c.Condition = &conditionJSON{Title: x.cond.GetTitle(), Expression: x.cond.GetExpression(), Description: x.cond.GetDescription()}
		}
		out = append(out, c)
	}
	for k, x := range was {
		if _, ok := is[k]; !ok {
			add("remove", x)
		}
	}
	for k, x := range is {
		if _, ok := was[k]; !ok {
			add("add", x)
		}
	}
	slices.SortFunc(out, func(a, b planChange) int {
		sa, sb := a.String(), b.String()
		return strings.Compare(sa[2:]+sa[:1], sb[2:]+sb[:1])
	})
	return out
}

// routedClient is the run's one policy.Client: it sends each request to the
// service that holds the resource's policy (routes.go), by the full name
// the Updater is given, and sees every call of a resource's
// read-modify-write: it counts writes, marks the end of a backoff wait,
// and refuses to start a read once the run is stopping.
type routedClient struct {
	run     *applyRun
	clients map[string]policy.Client // by route (grpcService)
}

var _ policy.Client = (*routedClient)(nil)

func (c *routedClient) target(key string) (*resState, policy.Client, error) {
	st := c.run.byKey[key]
	if st == nil {
		return nil, nil, status.Errorf(codes.Internal, "iamretry apply: no route for %q", key)
	}
	return st, c.clients[st.res.route.grpcService], nil
}

func (c *routedClient) GetIamPolicy(ctx context.Context, req *iampb.GetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	st, cl, err := c.target(req.GetResource())
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.waiting = false
	stopping := c.run.stopping.Load() && !c.run.f.dryRun
	if stopping {
		st.cancel(errStopped)
	}
	st.mu.Unlock()
	if stopping {
		return nil, status.Error(codes.Canceled, "iamretry apply: stopped by a signal before this read")
	}
	r := proto.Clone(req).(*iampb.GetIamPolicyRequest)
	r.Resource = st.res.rel
	return cl.GetIamPolicy(ctx, r, opts...)
}

func (c *routedClient) SetIamPolicy(ctx context.Context, req *iampb.SetIamPolicyRequest, opts ...gax.CallOption) (*iampb.Policy, error) {
	st, cl, err := c.target(req.GetResource())
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.writes++
	st.mu.Unlock()
	r := proto.Clone(req).(*iampb.SetIamPolicyRequest)
	r.Resource = st.res.rel
	p, err := cl.SetIamPolicy(ctx, r, opts...)
	if committed, maybe := err == nil, err != nil && iamcodes.OfError(err) == iamcodes.Transient; committed || maybe {
		st.mu.Lock()
		st.ambiguous = st.ambiguous || maybe // the write may have committed
		st.wroteAdded, st.wroteRemoved = st.lastAdded, st.lastRemoved
		st.mu.Unlock()
	}
	return p, err
}

// connect dials each service the file's resources need, once, with r's
// interceptor (gRPC) or RoundTripper (REST), and returns the run's client.
func (run *applyRun) connect(ctx context.Context, r *interceptor.Retrier) (*routedClient, func() error, error) {
	var rts []route
	for _, st := range run.states {
		if st.res.kind == kindPolicy {
			rts = append(rts, st.res.route)
		}
	}
	clients, closeAll, err := connectRoutes(ctx, rts, run.f.conn(), r)
	if err != nil {
		return nil, nil, err
	}
	return &routedClient{run: run, clients: clients}, closeAll, nil
}

// conn is where apply connects.
func (f *applyFlags) conn() connFlags {
	return connFlags{transport: f.transport, endpoint: f.endpoint, insecure: f.insecure, restBase: f.restBase}
}

// connFlags are the flags that say where apply and export connect.
type connFlags struct {
	transport, endpoint string
	insecure            bool
	restBase            string // --transport rest with --endpoint: the base URL
}

// check validates the flags and sets restBase.
func (c *connFlags) check() error {
	if c.insecure && c.endpoint == "" {
		return usagef("--insecure turns off TLS and credentials for --endpoint; give --endpoint HOST:PORT too (or drop --insecure to use Google's API)")
	}
	switch c.transport {
	case transportGRPC:
		if c.endpoint != "" {
			if strings.Contains(c.endpoint, "://") {
				return usagef("--endpoint %q: the gRPC transport takes HOST:PORT, such as 127.0.0.1:8085 (a URL is for --transport rest)", c.endpoint)
			}
			return checkHostPort(c.endpoint, "127.0.0.1:8085")
		}
	case transportREST:
		if c.endpoint != "" {
			base, err := restEndpoint(c.endpoint, c.insecure)
			if err != nil {
				return err
			}
			c.restBase = base
		}
	default:
		return usagef("--transport %q: want grpc or rest", c.transport)
	}
	return nil
}

// connectRoutes dials each service of rts once, with r's interceptor
// (gRPC) or RoundTripper (REST): the policy clients by route
// (grpcService), and a function that closes them.
func connectRoutes(ctx context.Context, rts []route, cf connFlags, r *interceptor.Retrier) (map[string]policy.Client, func() error, error) {
	clients := map[string]policy.Client{}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, cl := range closers {
			errs = append(errs, cl())
		}
		return errors.Join(errs...)
	}
	for _, rt := range rts {
		if clients[rt.grpcService] != nil {
			continue
		}
		pf := &policyFlags{route: rt, endpoint: cf.endpoint, insecure: cf.insecure, transport: cf.transport, restBase: cf.restBase}
		var cl policy.Client
		var closer func() error
		var err error
		if cf.transport == transportREST {
			cl, closer, err = restClient(ctx, pf, r)
		} else {
			gc, derr := rt.dial(ctx, pf, r.UnaryClientInterceptor())
			err = derr
			if derr == nil {
				cl, closer = policy.FromService(gc, rt.grpcService), gc.Close
			}
		}
		if err != nil {
			_ = closeAll()
			return nil, nil, fmt.Errorf("connecting to %s: %w", rt, err)
		}
		clients[rt.grpcService] = cl
		closers = append(closers, closer)
	}
	return clients, closeAll, nil
}

// scaledClock runs time scale times faster than the wall clock (the hidden
// --time-scale, for tests): waits are shorter and the deadline comes
// sooner, in proportion, so the schedule's shape is the guidance's.
type scaledClock struct {
	start time.Time
	scale float64
}

// maxTimeScale bounds --time-scale: the scaled clock's Now multiplies the
// time elapsed by it, and must not overflow a time.Duration within a run.
const maxTimeScale = 1e6

func newScaledClock(scale float64) scaledClock { return scaledClock{start: time.Now(), scale: scale} }

func (c scaledClock) Now() time.Time {
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.scale))
}

func (c scaledClock) Sleep(ctx context.Context, d time.Duration) error {
	return interceptor.WallClock().Sleep(ctx, time.Duration(float64(d)/c.scale))
}
