package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// textWidth is the width the demo's text fits: no line is longer.
const textWidth = 100

// textRenderer draws the demo for a person: coloured on a terminal, at
// most textWidth columns wide.
//
// Tables that come whole (the schedule, the summary, the instruments) are
// aligned by text/tabwriter. The timeline's rows come one at a time, as the
// calls happen, and --real-time shows them as they do: tabwriter aligns a
// column only over rows it holds back until a Flush, so a row would wait
// for the next. Each timeline row is therefore aligned on its own, with the
// fixed widths of attemptColumns, and written at once.
type textRenderer struct {
	w     io.Writer
	color bool
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
	cCyan   = "\x1b[36m"
)

func (r textRenderer) paint(color, s string) string {
	if !r.color || s == "" {
		return s
	}
	return color + s + cReset
}

// paragraph wraps text at textWidth: the first line starts with first, the
// others with rest (of the same width, as a rule); each line is painted.
func (r textRenderer) paragraph(b *strings.Builder, color, first, rest, text string) {
	for i, l := range wrap(text, textWidth-utf8.RuneCountInString(first)) {
		prefix := first
		if i > 0 {
			prefix = rest
		}
		b.WriteString(prefix + r.paint(color, l) + "\n")
	}
}

// wrap breaks text into lines of at most width runes at spaces; a word
// longer than width gets a line of its own.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

func (r textRenderer) render(ev event) error {
	var b strings.Builder
	switch e := ev.(type) {
	case demoStart:
		r.start(&b, e)
	case scheduleInfo:
		r.schedule(&b, e)
	case stepHeader:
		r.paragraph(&b, cBold, "", "   ", fmt.Sprintf("%d. %s", e.Step, e.Title))
		r.paragraph(&b, cDim, "   ", "   ", e.Guidance)
		b.WriteString(r.paint(cDim, attemptHeader) + "\n")
	case attemptEvent:
		r.attempt(&b, e)
	case noteEvent:
		r.paragraph(&b, cCyan, "   » ", "     ", e.Text)
	case returnedEvent:
		r.returned(&b, e)
	case policyEvent:
		r.policy(&b, e)
	case stepResult:
		mark := r.paint(cGreen, "✓")
		if !e.OK {
			mark = r.paint(cRed, "✗")
		}
		r.paragraph(&b, "", "   "+mark+" ", "     ",
			fmt.Sprintf("%s (%s in %s)", e.Outcome, plural(e.Calls, "call"), fmtDur(e.took)))
		b.WriteString("\n")
	case summary:
		r.summary(&b, e)
	case metricsEvent:
		r.metrics(&b, e)
	default:
		// scheduleRow (the table came whole with scheduleInfo) and
		// serverCall (the fake's call log, for programs) draw nothing.
	}
	_, err := io.WriteString(r.w, b.String())
	return err
}

func (r textRenderer) start(b *strings.Builder, e demoStart) {
	clock := "virtual time: the real schedule, shown in a second; --real-time waits it out"
	if e.RealTime {
		clock = "real time"
	}
	b.WriteString(r.paint(cBold, "iamretry demo") + ": Google's IAM retry guidance, acted out against an in-process fake IAM server\n")
	r.paragraph(b, cDim, "", "", "("+clock+"; every call takes a "+fmtDur(e.rtt)+" round trip)")
	b.WriteString("\n")
}

func (r textRenderer) schedule(b *strings.Builder, info scheduleInfo) {
	r.paragraph(b, cBold, "", "   ", "0. The documented schedule (interceptor.DefaultBackoff)")
	r.paragraph(b, "", "   ", "   ", fmt.Sprintf("wait(n) = min(%s * %g^n + random fraction of a second, maximum_backoff %s); retries stop %s after the first failure.",
		fmtDur(info.initial), info.Multiplier, fmtDur(info.max), fmtDur(info.deadline)))
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   retry n\tbase\tjitter\twait\n")
	for _, row := range info.Rows {
		jit := fmt.Sprintf("+[%s, %s)", fmtDur(row.jitterMin), fmtDur(row.jitterMax))
		wait := fmt.Sprintf("%s .. %s", fmtDur(row.waitMin), fmtDur(row.waitMax))
		if row.Truncated {
			jit = "none left"
			wait += "   (truncated at maximum_backoff)"
		}
		fmt.Fprintf(tw, "   %d\t%s\t%s\t%s\n", row.Retry, fmtDur(row.base), jit, wait)
	}
	tw.Flush() // into a strings.Builder: cannot fail
	r.paragraph(b, "", "   ", "   ", fmt.Sprintf("A call that keeps failing makes %d attempts: the wait after the last would end past the %s deadline.",
		info.MaxAttempts, fmtDur(info.deadline)))
	b.WriteString("\n")
}

// The timeline's columns: their widths are fixed, so that each row is
// aligned on its own and written as it happens (see textRenderer).
const (
	attemptRowFormat = "  %8s  %-23s %3d  %-21s  %-11s  %s"
	attemptHeadFmt   = "  %8s  %-23s %3s  %-21s  %-11s  %s"
)

var attemptHeader = fmt.Sprintf(attemptHeadFmt, "time", "call", "try", "code", "class", "decision")

func (r textRenderer) attempt(b *strings.Builder, e attemptEvent) {
	color := cRed
	switch {
	case e.ok:
		color = cGreen
	case e.wait > 0:
		color = cYellow
	}
	class := e.Class
	if class == "" {
		class = "-"
	}
	code := fmt.Sprintf("%-21s", fmt.Sprintf("%d %s", e.HTTP, e.Code))
	fmt.Fprintf(b, attemptRowFormat+"\n", fmt.Sprintf("+%.3fs", e.at.Seconds()), callName(e.Who, e.Method), e.Attempt,
		r.paint(color, code), class, r.paint(color, shortDecision(e)))
}

// callName is the timeline's name of a call: who made it (when the story
// has several callers) and a gRPC method without its service, a
// read-modify-write with its package: "writer-2 SetIamPolicy",
// "policy.Update" (policy.UpdateMethod).
func callName(who, method string) string {
	name := method
	if svc, m, ok := methodParts(method); ok {
		name = m
		if !strings.HasPrefix(method, "/") { // not a gRPC call: an Updater's
			name = svc + "." + m
		}
	}
	if who != "" {
		name = who + " " + name
	}
	return name
}

// shortDecision is the timeline's decision column: the decision with the
// wait that follows it.
func shortDecision(e attemptEvent) string {
	switch {
	case e.ok:
		return "ok"
	case e.reason == interceptor.Retry && e.Method == policy.UpdateMethod:
		return "rerun in " + fmt.Sprintf("%.3fs", e.wait.Seconds())
	case e.reason == interceptor.Retry:
		return "retry in " + fmt.Sprintf("%.3fs", e.wait.Seconds())
	case e.Decision == "to the caller: a conflict":
		return "to the caller"
	}
	return "give up: " + strings.ReplaceAll(e.Reason, "_", " ")
}

func (r textRenderer) returned(b *strings.Builder, e returnedEvent) {
	text := callName(e.Who, e.Method) + " returned " + e.Code
	if e.Error != "" {
		text += ": " + e.Error
	}
	color := cGreen
	if e.Code != codeName(codes.OK) {
		color = cYellow
	}
	r.paragraph(b, color, "   → ", "     ", text)
}

func (r textRenderer) policy(b *strings.Builder, e policyEvent) {
	var grants []string
	for _, bd := range e.Bindings {
		g := bd.Role + ": " + strings.Join(bd.Members, ", ")
		if len(bd.Members) > 2 {
			g = fmt.Sprintf("%s: %d members", bd.Role, len(bd.Members))
		}
		if bd.Condition != "" {
			g += " (if " + bd.Condition + ")"
		}
		grants = append(grants, g)
	}
	if len(grants) == 0 {
		grants = []string{"no bindings"}
	}
	r.paragraph(b, cCyan, "   » ", "     ", "the policy of "+e.Resource+" now grants "+strings.Join(grants, "; "))
}

func (r textRenderer) summary(b *strings.Builder, s summary) {
	b.WriteString(r.paint(cBold, "Summary") + "\n")
	var t strings.Builder
	writeSummaryTable(&t, s)
	for _, line := range strings.SplitAfter(t.String(), "\n") {
		if strings.HasSuffix(strings.TrimSpace(line), "FAIL") || strings.HasPrefix(line, "FAIL") {
			b.WriteString(r.paint(cRed, strings.TrimSuffix(line, "\n")) + "\n")
			continue
		}
		b.WriteString(line)
	}
}

// writeSummaryTable writes the summary as plain text, aligned by
// tabwriter: the part of the demo's output the golden test pins down.
func writeSummaryTable(w *strings.Builder, s summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  step\tstory\tcalls\ttime\toutcome\tverdict")
	failed := 0
	for _, r := range s.Steps {
		v := "ok"
		if !r.OK {
			v = "FAIL"
			failed++
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%.3fs\t%s\t%s\n", r.Step, r.Story, r.Calls, r.took.Seconds(), r.Outcome, v)
	}
	tw.Flush() // into a strings.Builder: cannot fail
	if s.OK {
		w.WriteString("\nEvery step ran to its end.\n")
		w.WriteString("(The tests of cmd/iamretry check each step's claims from `iamretry demo --json`.)\n")
		return
	}
	fmt.Fprintf(w, "\nFAIL: %d of %d steps did not run to their end (see the ✗ lines above).\n", failed, len(s.Steps))
}

// metrics draws the instruments' data points, one group per instrument,
// each point's attributes and value aligned by tabwriter.
func (r textRenderer) metrics(b *strings.Builder, e metricsEvent) {
	b.WriteString("\nOpenTelemetry instruments (meter github.com/iamretry/iamretry), read through a ManualReader:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for pts := e.Points; len(pts) > 0; {
		n := 1
		for n < len(pts) && pts[n].Name == pts[0].Name {
			n++
		}
		group := pts[:n]
		pts = pts[n:]
		fmt.Fprintf(tw, "  %s\n", group[0].Name) // no tab: ends the block of aligned rows above
		cells := 0
		for _, p := range group {
			cells = max(cells, len(p.Attributes))
		}
		for _, p := range group {
			attrs := pointAttrs(p)
			for len(attrs) < cells {
				attrs = append(attrs, "")
			}
			fmt.Fprintf(tw, "    %s\t%s\n", strings.Join(attrs, "\t"), pointValue(p))
		}
	}
	tw.Flush() // into a strings.Builder: cannot fail
}

// pointAttrs are a point's attributes, grpc.method first and shortened,
// the others as key=value, sorted.
func pointAttrs(p metricPoint) []string {
	var attrs []string
	if m, ok := p.Attributes["grpc.method"]; ok {
		attrs = append(attrs, shortGRPCMethod(m))
	}
	var rest []string
	for k, v := range p.Attributes {
		if k != "grpc.method" {
			rest = append(rest, k+"="+v)
		}
	}
	slices.Sort(rest)
	return append(attrs, rest...)
}

// shortGRPCMethod drops the package of an A66 method attribute:
// "google.iam.v1.IAMPolicy/GetIamPolicy" -> "IAMPolicy/GetIamPolicy". The
// Updater's (policy.UpdateMethod) is shown whole.
func shortGRPCMethod(m string) string {
	if svc, name, ok := methodParts(m); ok && m != policy.UpdateMethod {
		return svc + "/" + name
	}
	return m
}

// pointValue is a counter's value, or a histogram's count, sum and its
// non-empty buckets ("≤2:1": one value at most 2; "∞:1" past every bound).
func pointValue(p metricPoint) string {
	if p.Value != nil {
		return fmt.Sprint(*p.Value)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "n=%d sum=%s", *p.Count, fmtSum(p))
	for _, bk := range p.Buckets {
		le := "∞"
		if bk.LE != nil {
			le = fmt.Sprint(*bk.LE)
		}
		fmt.Fprintf(&s, " ≤%s:%d", le, bk.Count)
	}
	return s.String()
}

func fmtSum(p metricPoint) string {
	if p.Unit == "s" {
		return fmt.Sprintf("%.3fs", *p.Sum)
	}
	return fmt.Sprint(*p.Sum)
}
