package main

import (
	"errors"
	"sync"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// The demo, and the policy command's progress lines, report what happens as
// one stream of events. A producer says what happened (an attempt, a note,
// a step's result) and never how it looks; a renderer turns each event into
// text for a person (textRenderer, progressRenderer) or into one JSON
// object a line for a program (jsonRenderer).

// event is one thing a command reports. kind is its "type" in JSON.
type event interface{ kind() string }

// renderer writes events somewhere, each as it comes.
type renderer interface {
	render(ev event) error
}

// stream hands events to a renderer, one at a time: producers call emit
// from the goroutines of the calls they observe. After the first write
// error it drops what follows and err returns that error.
type stream struct {
	mu       sync.Mutex
	r        renderer
	firstErr error
}

func newStream(r renderer) *stream { return &stream{r: r} }

func (s *stream) emit(ev event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstErr == nil {
		s.firstErr = s.r.render(ev)
	}
}

func (s *stream) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr
}

// demoStart opens the demo.
type demoStart struct {
	Seed     uint64 `json:"seed"`
	RTTMS    int64  `json:"rtt_ms"`
	RealTime bool   `json:"real_time"`
	rtt      time.Duration
}

func (demoStart) kind() string { return "start" }

// scheduleInfo is the documented schedule (step 0). In JSON its rows follow
// as scheduleRow events; the text renderer draws the table from Rows.
type scheduleInfo struct {
	InitialMS     int64         `json:"initial_ms"`
	Multiplier    float64       `json:"multiplier"`
	MaxBackoffMS  int64         `json:"max_backoff_ms"`
	DeadlineMS    int64         `json:"deadline_ms"`
	MaxAttempts   int           `json:"max_attempts_in_deadline"`
	Rows          []scheduleRow `json:"-"`
	deadline, max time.Duration
	initial       time.Duration
}

func (scheduleInfo) kind() string { return "schedule_info" }

// scheduleRow is one retry of the documented schedule: its wait lies in
// [WaitMin, WaitMax] milliseconds.
type scheduleRow struct {
	Retry     int   `json:"retry"`
	BaseMS    int64 `json:"base_ms"`
	JitterMin int64 `json:"jitter_min_ms"`
	JitterMax int64 `json:"jitter_max_ms"`
	WaitMin   int64 `json:"wait_min_ms"`
	WaitMax   int64 `json:"wait_max_ms"`
	Truncated bool  `json:"truncated"`

	base, jitterMin, jitterMax, waitMin, waitMax time.Duration
}

func (scheduleRow) kind() string { return "schedule" }

// stepHeader opens a step of the story.
type stepHeader struct {
	Step     int    `json:"step"`
	Title    string `json:"title"`
	Guidance string `json:"guidance"`
}

func (stepHeader) kind() string { return "step" }

// attemptEvent is one attempt of one call (or one read-modify-write run):
// a failed one with the Retrier's decision, or one that succeeded.
type attemptEvent struct {
	Step      int    `json:"step"`
	AtMS      int64  `json:"t_ms"` // since the demo started, on its clock
	Who       string `json:"who,omitempty"`
	Method    string `json:"method"`
	Attempt   int    `json:"attempt"`
	Code      string `json:"code"` // what the server answered
	HTTP      int    `json:"http"`
	Class     string `json:"class,omitempty"`    // how the Retrier classed it; "" for OK
	Decision  string `json:"decision"`           // "ok", "retry", "rerun read-modify-write", "give up: REASON", ...
	Reason    string `json:"reason,omitempty"`   // the decision as a token: retry, deadline, unsafe, ... ("" for OK)
	WaitMS    int64  `json:"wait_ms"`            // the wait before the next attempt
	ElapsedMS int64  `json:"elapsed_ms"`         // since the call's first failure
	Resource  string `json:"resource,omitempty"` // of a policy update

	at, wait time.Duration
	code     codes.Code
	reason   interceptor.Reason
	class    iamcodes.Class
	ok       bool // the attempt succeeded
}

func (attemptEvent) kind() string { return "attempt" }

// failedAttempt is the event of an observer's report a.
func failedAttempt(step int, at time.Duration, who string, a interceptor.Attempt) attemptEvent {
	code := serverCode(a.Err)
	ev := attemptEvent{
		Step: step, AtMS: at.Milliseconds(), Who: who, Method: a.Method, Attempt: a.N,
		Code: codeName(code), HTTP: httpStatus(code), Class: a.Class.String(),
		Decision: decision(a), Reason: reasonToken(a.Reason), WaitMS: a.Wait.Milliseconds(),
		ElapsedMS: a.Elapsed.Milliseconds(), Resource: a.Resource,
		at: at, wait: a.Wait, code: code, reason: a.Reason, class: a.Class,
	}
	if a.Reason == interceptor.Succeeded {
		ev.Code, ev.HTTP, ev.Class, ev.code, ev.ok = codeName(codes.OK), 200, "", codes.OK, true
	}
	return ev
}

// okAttempt is the event of attempt n of method, which succeeded.
func okAttempt(step int, at time.Duration, who, method string, n int) attemptEvent {
	return attemptEvent{
		Step: step, AtMS: at.Milliseconds(), Who: who, Method: method, Attempt: n,
		Code: codeName(codes.OK), HTTP: 200, Decision: "ok", at: at, code: codes.OK, ok: true,
	}
}

// serverCode is the code the server answered: the innermost gRPC status in
// err's chain, so that a wrapper with a status of its own around the
// server's error shows the server's code. A grant refused for a member not
// visible yet is INVALID_ARGUMENT (HTTP 400), the server's code, and class
// Propagation when the 404 opt-in reruns it: the event shows what the
// server said, and the class how it was treated. A REST error's code is its
// JSON body's status (codes.CodeOf).
func serverCode(err error) codes.Code {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return iamcodes.CodeOf(ge)
	}
	code := status.Code(err)
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		if s, ok := status.FromError(e); ok { // e is, or wraps, a status: the last one met is the innermost
			code = s.Code()
		}
	}
	return code
}

// httpStatus is the HTTP status Google APIs answer for code, 200 for OK.
func httpStatus(c codes.Code) int {
	if c == codes.OK {
		return 200
	}
	return iamcodes.HTTPStatus(c)
}

func decision(a interceptor.Attempt) string {
	switch {
	case a.Reason == interceptor.Succeeded:
		return "ok"
	case a.Reason == interceptor.Retry && a.Method == policy.UpdateMethod:
		return "rerun read-modify-write"
	case a.Reason == interceptor.Retry:
		return "retry"
	case a.Reason == interceptor.NotRetryable && a.Class == iamcodes.Conflict:
		return "to the caller: a conflict"
	}
	return "give up: " + a.Reason.String()
}

// reasonToken is the Retrier's reason as a JSON token (Reason.MarshalText):
// the give-ups are the values of the iamretry.reason attribute of the
// gave_up instrument; "unknown" for a reason this build does not know.
func reasonToken(r interceptor.Reason) string {
	t, err := r.MarshalText()
	if err != nil {
		return "unknown"
	}
	return string(t)
}

// noteEvent is a sentence of the story.
type noteEvent struct {
	Step int    `json:"step"`
	Text string `json:"text"`
}

func (noteEvent) kind() string { return "note" }

// returnedEvent is what a call the story makes returned to its caller.
// What it should return is checked by the tests over `demo --json`.
type returnedEvent struct {
	Step   int    `json:"step"`
	Who    string `json:"who,omitempty"`
	Method string `json:"method"`
	Code   string `json:"code"`
	Error  string `json:"error,omitempty"`
}

func (returnedEvent) kind() string { return "returned" }

// serverCall is one call the fake answered during a step (its call log).
type serverCall struct {
	Step     int    `json:"step"`
	Method   string `json:"method"`
	Resource string `json:"resource"`
	Code     string `json:"code"`
	AtMS     int64  `json:"t_ms"`
}

func (serverCall) kind() string { return "call" }

// policyEvent is a policy as the fake holds it at the end of a step.
type policyEvent struct {
	Step     int             `json:"step"`
	Resource string          `json:"resource"`
	Bindings []bindingRecord `json:"bindings"`
}

// bindingRecord is one binding of a policyEvent.
type bindingRecord struct {
	Role      string   `json:"role"`
	Members   []string `json:"members"`
	Condition string   `json:"condition,omitempty"` // the condition's expression
}

func (policyEvent) kind() string { return "policy" }

// stepResult is what a step did, and whether it ran to its end (OK: no
// error stopped it and it reported its calls).
type stepResult struct {
	Step    int    `json:"step"`
	Story   string `json:"story"`
	Calls   int    `json:"calls"` // calls the fake received during the step
	TookMS  int64  `json:"took_ms"`
	Outcome string `json:"outcome"`
	OK      bool   `json:"ok"`
	took    time.Duration
}

func (stepResult) kind() string { return "result" }

// summary ends the demo: OK when every step ran to its end.
type summary struct {
	OK    bool         `json:"ok"`
	Steps []stepResult `json:"steps"`
}

func (summary) kind() string { return "summary" }

// metricsEvent is every data point of the OpenTelemetry instruments, read
// once at the end of the demo (--metrics).
type metricsEvent struct {
	Points []metricPoint `json:"points"`
}

func (metricsEvent) kind() string { return "metrics" }

// metricPoint is one data point: a counter's Value, or a histogram's Count,
// Sum and non-empty Buckets.
type metricPoint struct {
	Name       string            `json:"name"`
	Unit       string            `json:"unit"`
	Attributes map[string]string `json:"attributes"`
	Value      *int64            `json:"value,omitempty"`
	Count      *uint64           `json:"count,omitempty"`
	Sum        *float64          `json:"sum,omitempty"`
	Buckets    []metricBucket    `json:"buckets,omitempty"`
}

// metricBucket is a histogram bucket: Count values at most LE (no LE: the
// last bucket, past every bound).
type metricBucket struct {
	LE    *float64 `json:"le,omitempty"`
	Count uint64   `json:"count"`
}
