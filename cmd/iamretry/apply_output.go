package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// applyOutput is what apply prints: on stdout a line a resource and a
// summary (or, with --json, a JSON object a line); on stderr the retries,
// and on a terminal a progress line redrawn as resources finish.
type applyOutput struct {
	mu       sync.Mutex
	stdout   io.Writer
	stderr   io.Writer
	json     *stream // --json: events on stdout
	term     bool    // stderr is a terminal: draw the progress line
	drawn    bool    // the progress line is on screen
	dryRun   bool
	firstErr error
	// ended: the summary is out. The Updater may still end an attempt of
	// an abandoned resource on a goroutine of its own after the run
	// returned; its report is dropped (the writers are the caller's again).
	ended bool

	total, done, running int
	counts               map[string]int
	// --dry-run prints the plan in the file's order: a resource's event
	// waits here until those before it are printed.
	held []*applyResourceEvent
	next int
}

func newApplyOutput(cio *cmdIO, f *applyFlags) *applyOutput {
	o := &applyOutput{stdout: cio.stdout, stderr: cio.stderr, dryRun: f.dryRun, term: isTerminal(cio.stderr), counts: map[string]int{}}
	if f.json {
		o.json = newStream(jsonRenderer{w: cio.stdout})
	}
	return o
}

// applyStart opens the JSON stream.
type applyStart struct {
	File      string `json:"file"`
	Resources int    `json:"resources"`
	DryRun    bool   `json:"dry_run"`
	Transport string `json:"transport"`
	Parallel  int    `json:"parallel"`
	DeadlineS int64  `json:"deadline_s"`
}

func (applyStart) kind() string { return "start" }

// applyResourceEvent is what was done to one resource.
type applyResourceEvent struct {
	Resource string `json:"resource"`
	Line     int    `json:"line"`
	// Outcome: changed, unchanged, failed, interrupted, not_started; with
	// --dry-run would_change, nothing_to_do or failed.
	Outcome  string   `json:"outcome"`
	Attempts int      `json:"attempts"`
	Writes   int      `json:"writes"`
	Added    int      `json:"added,omitempty"`   // grants added by the write that converged it
	Removed  int      `json:"removed,omitempty"` // grants removed by it
	Plan     []string `json:"plan,omitempty"`    // --dry-run: "+ ROLE  MEMBER", "- ROLE  MEMBER"
	// Changes is the plan as objects (--dry-run), one a grant.
	Changes []planChange `json:"changes,omitempty"`
	TookMS  int64        `json:"took_ms"`
	Code    string       `json:"code,omitempty"`  // the server's code of a failure
	Error   string       `json:"error,omitempty"` // the server's error

	grants bool // an allow policy's: Added and Removed count its grants
}

func (applyResourceEvent) kind() string { return "resource" }

// applySummary ends the JSON stream.
type applySummary struct {
	OK          bool   `json:"ok"` // every resource converged (or was read, with --dry-run)
	DryRun      bool   `json:"dry_run"`
	Resources   int    `json:"resources"`
	Changed     int    `json:"changed"`
	Unchanged   int    `json:"unchanged"`
	WouldChange int    `json:"would_change,omitempty"`
	Failed      int    `json:"failed"`
	Interrupted int    `json:"interrupted"`
	NotStarted  int    `json:"not_started"`
	Writes      int    `json:"writes"`
	TookMS      int64  `json:"took_ms"`
	Signal      string `json:"signal,omitempty"` // the signal that stopped the run
}

func (applySummary) kind() string { return "summary" }

func (o *applyOutput) emit(ev event) {
	if o.json != nil {
		o.json.emit(ev)
	}
}

// line writes one line of text to w, clearing the progress line first.
func (o *applyOutput) line(w io.Writer, format string, args ...any) {
	o.clear()
	if _, err := fmt.Fprintf(w, format+"\n", args...); err != nil && o.firstErr == nil {
		o.firstErr = err
	}
}

func (o *applyOutput) clear() {
	if o.drawn {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.drawn = false
	}
}

func (o *applyOutput) draw() {
	if !o.term {
		return
	}
	var parts []string
	for _, k := range []string{outChanged, outUnchanged, outWouldChange, outNothingToDo, outFailed, outInterrupted} {
		if n := o.counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(k, "_", " ")))
		}
	}
	parts = append(parts, fmt.Sprintf("%d under way", o.running))
	fmt.Fprintf(o.stderr, "\r\033[K[%d/%d] %s", o.done, o.total, strings.Join(parts, ", "))
	o.drawn = true
}

func (o *applyOutput) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.firstErr != nil {
		return o.firstErr
	}
	if o.json != nil {
		return o.json.err()
	}
	return nil
}

func (o *applyOutput) begin(run *applyRun) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f := run.f
	o.total = len(run.states)
	o.held = make([]*applyResourceEvent, o.total)
	o.emit(applyStart{File: run.file.name, Resources: o.total, DryRun: f.dryRun, Transport: f.transport, Parallel: f.parallel, DeadlineS: int64(f.deadline / time.Second)})
	if o.json == nil {
		what := "converging"
		if f.dryRun {
			what = "dry run (nothing will be written) of"
		}
		o.line(o.stdout, "iamretry apply: %s %s from %s (%s, %d at a time, deadline %s)",
			what, plural(o.total, "resource"), run.file.name, f.transport, f.parallel, fmtDur(f.deadline))
	}
	o.draw()
}

func (o *applyOutput) started(_ *applyRun, _ *resState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.running++
	o.draw()
}

// retry tells one failed attempt on stderr: which resource, what the
// server said, and what happens next.
func (o *applyOutput) retry(resource string, a interceptor.Attempt) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json != nil || o.ended {
		return // the resource's event says how many attempts it took
	}
	ev := failedAttempt(0, 0, "", a)
	what := "gave up: " + a.Reason.String()
	switch {
	case a.Reason == interceptor.Retry && a.Method == "iamretry.policy/Update":
		what = "read-modify-write again in " + fmtDur(a.Wait)
	case a.Reason == interceptor.Retry:
		what = "retrying in " + fmtDur(a.Wait)
	case a.Reason == interceptor.ContextDone:
		what = "abandoned"
	}
	who := shortMethod(a.Method)
	if resource != "" {
		who = resource
	}
	o.line(o.stderr, "iamretry: %s: attempt %d: %s (HTTP %d, %s): %s", who, a.N, ev.Code, ev.HTTP, ev.Class, what)
	o.draw()
}

// failure is the server's code and error of a failed resource: the
// message of the innermost gRPC status (or REST error) in err's chain, and
// the field violations the server sent beside it.
func failure(err error) (code, msg string) {
	code, msg = serverFailure(err)
	var h interface{ hint() string }
	if errors.As(err, &h) {
		msg += " " + h.hint()
	}
	return code, msg
}

// serverFailure is failure without the CLI's hints.
func serverFailure(err error) (code, msg string) {
	code = codeName(serverCode(err))
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		msg = ge.Message
		for _, d := range ge.Details {
			m, _ := d.(map[string]any)
			vs, _ := m["fieldViolations"].([]any)
			for _, v := range vs {
				if fv, ok := v.(map[string]any); ok {
					if desc, ok := fv["description"].(string); ok && desc != "" {
						msg += " " + desc
					}
				}
			}
		}
		return code, msg
	}
	var st *status.Status
	for e := err; e != nil; e = errors.Unwrap(e) {
		if s, ok := e.(interface{ GRPCStatus() *status.Status }); ok {
			st = s.GRPCStatus()
		}
	}
	if st == nil {
		return code, err.Error()
	}
	msg = st.Message()
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, fv := range br.GetFieldViolations() {
				msg += " " + fv.GetDescription()
			}
		}
	}
	return code, msg
}

func (o *applyOutput) finished(_ *applyRun, st *resState) {
	st.mu.Lock()
	ev := applyResourceEvent{Resource: st.res.name, Line: st.res.line, Outcome: st.outcome, Attempts: st.attempts,
		Writes: st.writes, Plan: st.plan, Changes: st.changes, TookMS: st.took.Milliseconds()}
	ev.grants = st.res.kind == kindPolicy
	if st.outcome == outChanged {
		ev.Added, ev.Removed = st.wroteAdded, st.wroteRemoved
	}
	if st.err != nil {
		ev.Code, ev.Error = failure(st.err)
	}
	took := st.took
	st.mu.Unlock()

	o.mu.Lock()
	defer o.mu.Unlock()
	o.running--
	o.done++
	o.counts[ev.Outcome]++
	if o.dryRun {
		o.held[st.index] = &ev
		o.flush(false)
	} else {
		o.print(ev, took)
	}
	o.draw()
}

// flush prints the held events whose predecessors are printed; all: every
// one left, skipping resources that never ran.
func (o *applyOutput) flush(all bool) {
	for ; o.next < len(o.held); o.next++ {
		ev := o.held[o.next]
		if ev == nil {
			if all {
				continue
			}
			return
		}
		o.print(*ev, time.Duration(ev.TookMS)*time.Millisecond)
	}
}

// print writes one resource's event: a JSON object, or a line of text.
func (o *applyOutput) print(ev applyResourceEvent, took time.Duration) {
	if o.json != nil {
		o.emit(ev)
		return
	}
	stats := fmt.Sprintf("%s, %s, %s", plural(ev.Attempts, "attempt"), plural(ev.Writes, "write"), fmtDur(took))
	switch ev.Outcome {
	case outChanged:
		if !ev.grants { // a role or deny policy
			o.line(o.stdout, "%s: changed (%s)", ev.Resource, stats)
			break
		}
		o.line(o.stdout, "%s: changed (+%d -%d; %s)", ev.Resource, ev.Added, ev.Removed, stats)
	case outUnchanged:
		if ev.Writes == 0 {
			o.line(o.stdout, "%s: unchanged, already as the file says; nothing written (%s)", ev.Resource, stats)
		} else {
			o.line(o.stdout, "%s: unchanged, already as the file says; the writes were refused (%s)", ev.Resource, stats)
		}
	case outFailed:
		o.line(o.stdout, "%s: FAILED (%s): %s: %s", ev.Resource, stats, ev.Code, ev.Error)
	case outInterrupted:
		if ev.Writes == 0 {
			o.line(o.stdout, "%s: interrupted before any write (%s)", ev.Resource, stats)
		} else {
			o.line(o.stdout, "%s: interrupted; a write carrying the etag it read may have landed, a rerun converges it (%s)", ev.Resource, stats)
		}
	case outNothingToDo:
		o.line(o.stdout, "%s: nothing to do", ev.Resource)
	case outWouldChange:
		o.line(o.stdout, "%s: would change:", ev.Resource)
		for _, l := range ev.Plan {
			o.line(o.stdout, "  %s", l)
		}
	}
}

// summary ends the output: counts, writes and time, what failed, and what
// a signal left undone.
func (o *applyOutput) summary(run *applyRun, took time.Duration, ctx context.Context) {
	s := applySummary{DryRun: run.f.dryRun, Resources: len(run.states), TookMS: took.Milliseconds()}
	var failed, notStarted []*resState
	for _, st := range run.states {
		st.mu.Lock()
		s.Writes += st.writes
		switch st.outcome {
		case outChanged:
			s.Changed++
		case outUnchanged, outNothingToDo:
			s.Unchanged++
		case outWouldChange:
			s.WouldChange++
		case outFailed:
			s.Failed++
			failed = append(failed, st)
		case outInterrupted:
			s.Interrupted++
		case outNotStarted:
			s.NotStarted++
			notStarted = append(notStarted, st)
		}
		st.mu.Unlock()
	}
	if ctx.Err() != nil {
		s.Signal = "SIGINT"
		if signalExitCode(ctx) == 143 {
			s.Signal = "SIGTERM"
		}
	}
	s.OK = s.Failed == 0 && s.Interrupted == 0 && s.NotStarted == 0

	o.mu.Lock()
	defer o.mu.Unlock()
	defer func() { o.ended = true }()
	o.flush(true)
	if o.json != nil {
		for _, st := range notStarted {
			o.emit(applyResourceEvent{Resource: st.res.name, Line: st.res.line, Outcome: outNotStarted})
		}
		o.emit(s)
		o.clear()
		return
	}
	if s.Signal != "" {
		o.line(o.stdout, "stopped by %s: %s done, %d interrupted, %d not started; run the same command again to converge the rest",
			s.Signal, plural(s.Resources-s.Interrupted-s.NotStarted, "resource"), s.Interrupted, s.NotStarted)
	}
	switch {
	case s.DryRun:
		o.line(o.stdout, "summary (dry run, nothing written): %s: %d would change, %d nothing to do, %d failed (%s)",
			plural(s.Resources, "resource"), s.WouldChange, s.Unchanged, s.Failed, fmtDur(took))
	case s.OK && s.Writes == 0:
		o.line(o.stdout, "summary: %s, all already as %s says; nothing written (%s)", plural(s.Resources, "resource"), run.file.name, fmtDur(took))
	default:
		o.line(o.stdout, "summary: %s: %d changed, %d unchanged, %d failed; %s (%s)",
			plural(s.Resources, "resource"), s.Changed, s.Unchanged, s.Failed, plural(s.Writes, "write"), fmtDur(took))
	}
	for _, st := range failed {
		code, msg := failure(st.err)
		o.line(o.stdout, "failed: %s (line %d): %s: %s", st.res.name, st.res.line, code, msg)
	}
	o.clear()
}
