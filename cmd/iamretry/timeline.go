package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor/policy"

	iamcodes "github.com/iamretry/iamretry/codes"
)

// timeline prints the demo for a person (aligned text, coloured on a
// terminal) or for a program (--json: one JSON object a line, each with a
// "type"). It is safe for concurrent use: observers call it from the
// goroutines of the calls they observe.
type timeline struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	color bool
	err   error // the first write error; later writes are skipped
}

// isTerminal reports whether w is a character device (a terminal), the
// only place colour belongs. NO_COLOR (https://no-color.org) turns it off.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// ANSI colours.
const (
	cReset  = "\x1b[0m"
	cBold   = "\x1b[1m"
	cDim    = "\x1b[2m"
	cRed    = "\x1b[31m"
	cGreen  = "\x1b[32m"
	cYellow = "\x1b[33m"
	cBlue   = "\x1b[34m"
	cCyan   = "\x1b[36m"
)

func (t *timeline) paint(color, s string) string {
	if !t.color || s == "" {
		return s
	}
	return color + s + cReset
}

func (t *timeline) write(s string) {
	if t.err != nil {
		return
	}
	_, t.err = io.WriteString(t.w, s)
}

func (t *timeline) emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if t.err == nil {
			t.err = err
		}
		return
	}
	t.write(string(b) + "\n")
}

// text prints free text (text mode only).
func (t *timeline) text(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.json {
		t.write(s)
	}
}

// scheduleRow is one retry of the documented schedule.
type scheduleRow struct {
	Type      string `json:"type"` // "schedule"
	Retry     int    `json:"retry"`
	BaseMS    int64  `json:"base_ms"`
	JitterMin int64  `json:"jitter_min_ms"`
	JitterMax int64  `json:"jitter_max_ms"`
	WaitMin   int64  `json:"wait_min_ms"`
	WaitMax   int64  `json:"wait_max_ms"`
	Truncated bool   `json:"truncated"`

	base, jitterMin, jitterMax, waitMin, waitMax time.Duration
}

type scheduleInfo struct {
	Type          string        `json:"type"` // "schedule_info"
	InitialMS     int64         `json:"initial_ms"`
	Multiplier    float64       `json:"multiplier"`
	MaxBackoffMS  int64         `json:"max_backoff_ms"`
	DeadlineMS    int64         `json:"deadline_ms"`
	MaxAttempts   int           `json:"max_attempts_in_deadline"`
	Rows          []scheduleRow `json:"-"`
	deadline, max time.Duration
	initial       time.Duration
}

func (t *timeline) schedule(info scheduleInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		t.emit(info)
		for _, r := range info.Rows {
			t.emit(r)
		}
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", t.paint(cBold, "0. The documented schedule (interceptor.DefaultBackoff)"))
	fmt.Fprintf(&b, "   wait(n) = min(%s * %g^n + random fraction of a second, maximum_backoff %s); retries stop %s after the first failure\n\n",
		fmtDur(info.initial), info.Multiplier, fmtDur(info.max), fmtDur(info.deadline))
	fmt.Fprintf(&b, "   %-7s %-7s %-15s %s\n", "retry n", "base", "jitter", "wait")
	for _, r := range info.Rows {
		jit := fmt.Sprintf("+[%s, %s)", fmtDur(r.jitterMin), fmtDur(r.jitterMax))
		wait := fmt.Sprintf("%s .. %s", fmtDur(r.waitMin), fmtDur(r.waitMax))
		if r.Truncated {
			jit = "none left"
			wait += "   (truncated at maximum_backoff)"
		}
		fmt.Fprintf(&b, "   %-7d %-7s %-15s %s\n", r.Retry, fmtDur(r.base), jit, wait)
	}
	fmt.Fprintf(&b, "   A call that keeps failing makes %d attempts: the wait after the last would end past the %s deadline.\n\n",
		info.MaxAttempts, fmtDur(info.deadline))
	t.write(b.String())
}

// stepHeader opens a step of the story.
type stepHeader struct {
	Type     string `json:"type"` // "step"
	Step     int    `json:"step"`
	Title    string `json:"title"`
	Guidance string `json:"guidance"`
}

func (t *timeline) step(h stepHeader) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.Type = "step"
	if t.json {
		t.emit(h)
		return
	}
	t.write(fmt.Sprintf("%s\n   %s\n", t.paint(cBold, fmt.Sprintf("%d. %s", h.Step, h.Title)), t.paint(cDim, h.Guidance)))
	t.write(t.paint(cDim, fmt.Sprintf("   %9s  %-9s %-34s %3s  %-17s %4s  %-11s %-33s %s", "time", "who", "method", "try", "code", "http", "class", "decision", "wait")) + "\n")
}

// attemptRow is one attempt of one call (or one read-modify-write run).
type attemptRow struct {
	Type     string `json:"type"` // "attempt"
	Step     int    `json:"step"`
	AtMS     int64  `json:"t_ms"` // since the demo started, on its clock
	Who      string `json:"who,omitempty"`
	Method   string `json:"method"`
	Attempt  int    `json:"attempt"`
	Code     string `json:"code"`
	HTTP     int    `json:"http"`
	Class    string `json:"class,omitempty"`
	Decision string `json:"decision"`
	WaitMS   int64  `json:"wait_ms"`
	at, wait time.Duration
	code     codes.Code
	giveUp   bool // a retryable failure that was given up, or not retried
}

func newAttemptRow(step int, at time.Duration, who, method string, n int, code codes.Code, class, decision string, wait time.Duration) attemptRow {
	return attemptRow{
		Type: "attempt", Step: step, AtMS: at.Milliseconds(), Who: who, Method: method, Attempt: n,
		Code: codeName(code), HTTP: httpStatus(code), Class: class, Decision: decision,
		WaitMS: wait.Milliseconds(), at: at, wait: wait, code: code,
	}
}

// httpStatus is the HTTP status Google APIs answer for code, 200 for OK.
func httpStatus(c codes.Code) int {
	if c == codes.OK {
		return 200
	}
	return iamcodes.HTTPStatus(c)
}

func (t *timeline) attempt(r attemptRow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		t.emit(r)
		return
	}
	color := cRed
	switch {
	case r.code == codes.OK:
		color = cGreen
	case r.wait > 0:
		color = cYellow
	}
	wait := "-"
	if r.wait > 0 {
		wait = fmt.Sprintf("%.3fs", r.wait.Seconds())
	}
	class := r.Class
	if class == "" {
		class = "-"
	}
	t.write(fmt.Sprintf("   %9s  %-9s %-34s %3d  %s %4d  %-11s %s %s\n",
		fmt.Sprintf("+%.3fs", r.at.Seconds()), r.Who, shortMethod(r.Method), r.Attempt,
		t.paint(color, fmt.Sprintf("%-17s", r.Code)), r.HTTP, class,
		t.paint(color, fmt.Sprintf("%-33s", r.Decision)), wait))
}

// shortMethod drops the package of a full gRPC method name:
// "/google.iam.v1.IAMPolicy/GetIamPolicy" -> "IAMPolicy.GetIamPolicy", and
// policy.UpdateMethod -> "policy.Update" (the resource is in the step's note).
func shortMethod(m string) string {
	if m == policy.UpdateMethod {
		return "policy.Update"
	}
	if !strings.HasPrefix(m, "/") {
		return m
	}
	svc, name, ok := strings.Cut(m[1:], "/")
	if !ok {
		return m
	}
	if i := strings.LastIndexByte(svc, '.'); i >= 0 {
		svc = svc[i+1:]
	}
	return svc + "." + name
}

// noteLine is a sentence of the story.
type noteLine struct {
	Type string `json:"type"` // "note"
	Step int    `json:"step"`
	Text string `json:"text"`
}

func (t *timeline) note(step int, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		t.emit(noteLine{Type: "note", Step: step, Text: text})
		return
	}
	t.write("   " + t.paint(cCyan, "» "+text) + "\n")
}

// check is one expectation of a step.
type check struct {
	What string `json:"what"`
	OK   bool   `json:"ok"`
}

// stepResult is what a step did and whether it behaved as the guidance says.
type stepResult struct {
	Type    string  `json:"type"` // "result"
	Step    int     `json:"step"`
	Story   string  `json:"story"`
	Calls   int     `json:"calls"` // calls the fake received during the step
	TookMS  int64   `json:"took_ms"`
	Outcome string  `json:"outcome"`
	OK      bool    `json:"ok"`
	Checks  []check `json:"checks"`
	took    time.Duration
}

func (t *timeline) result(r stepResult) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		t.emit(r)
		return
	}
	var b strings.Builder
	for _, c := range r.Checks {
		mark := t.paint(cGreen, "✓")
		if !c.OK {
			mark = t.paint(cRed, "✗")
		}
		fmt.Fprintf(&b, "   %s %s\n", mark, c.What)
	}
	b.WriteString("\n")
	t.write(b.String())
}

// summary is the table at the end.
type summary struct {
	Type  string       `json:"type"` // "summary"
	OK    bool         `json:"ok"`
	Steps []stepResult `json:"steps"`
}

func (t *timeline) summary(s summary) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s.Type = "summary"
	if t.json {
		t.emit(s)
		return
	}
	t.write(t.paint(cBold, "Summary") + "\n")
	var b strings.Builder
	writeSummaryTable(&b, s)
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		switch {
		case strings.HasSuffix(strings.TrimSpace(line), "FAIL"), strings.HasPrefix(line, "FAIL"):
			t.write(t.paint(cRed, strings.TrimSuffix(line, "\n")) + strings.Repeat("\n", strings.Count(line, "\n")))
		default:
			t.write(line)
		}
	}
}

// writeSummaryTable writes the summary as plain aligned text: the part of
// the demo's output that the golden test pins down.
func writeSummaryTable(w io.Writer, s summary) {
	rows := [][]string{{"step", "story", "calls", "time", "outcome", "verdict"}}
	for _, r := range s.Steps {
		v := "ok"
		if !r.OK {
			v = "FAIL"
		}
		rows = append(rows, []string{fmt.Sprint(r.Step), r.Story, fmt.Sprint(r.Calls), fmt.Sprintf("%.3fs", r.took.Seconds()), r.Outcome, v})
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			switch i {
			case 2, 3: // numbers right-aligned
				line.WriteString(pad + c)
			default:
				line.WriteString(c + pad)
			}
			if i < len(row)-1 {
				line.WriteString("  ")
			}
		}
		b.WriteString("  " + strings.TrimRight(line.String(), " ") + "\n")
	}
	if s.OK {
		b.WriteString("\nEvery step behaved as Google's IAM retry guidance says.\n")
	} else {
		n := 0
		for _, r := range s.Steps {
			if !r.OK {
				n++
			}
		}
		fmt.Fprintf(&b, "\nFAIL: %d of %d steps did not behave as the guidance says (see the ✗ lines above).\n", n, len(s.Steps))
	}
	io.WriteString(w, b.String())
}
