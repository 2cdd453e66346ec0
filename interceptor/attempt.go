package interceptor

import (
	"errors"
	"strconv"
	"time"

	"github.com/iamretry/iamretry/codes"
)

// Attempt is one report to observers (WithObserver): a failed attempt and what
// was decided, a WaitVisible good read (Reason Confirming), or the success of
// a call that was retried (Reason Succeeded). A call that succeeds at once
// reports nothing.
type Attempt struct {
	Method   string        // the gRPC method ("/google.iam.v1.IAMPolicy/GetIamPolicy"), or a Do's or Transact's name
	Resource string        // a read-modify-write's resource; "" elsewhere
	N        int           // the attempt's number, from 1
	Err      error         // the attempt's error; nil with Reason Succeeded or Confirming
	Class    codes.Class   // Err's retry class (Permanent when Err is nil)
	Wait     time.Duration // the wait before the next attempt; 0 when none follows
	Elapsed  time.Duration // time since the call's first failure (0 on the first attempt)
	Retrying bool          // another attempt follows
	Reason   Reason        // why the Retrier retries or stops
}

// Reason says why a Retrier retried a failed attempt or stopped.
type Reason uint8

const (
	Retry             Reason = iota // retryable, and the schedule allows another attempt
	NotRetryable                    // a class not retried (Permanent, Conflict outside Transact, 404 without the opt-in)
	Unsafe                          // ambiguous, and the request is not safe to send again
	Disabled                        // retries turned off for the call
	MaxAttempts                     // the attempt cap is reached
	DeadlineReached                 // the next wait would end after the retry deadline
	ContextDeadline                 // the next wait would end after the context's deadline
	ContextDone                     // the caller's context ended
	BudgetExhausted                 // the retry budget refused the retry
	ServerPushback                  // the server's pushback trailer said not to retry
	Succeeded                       // a retried call succeeded (Err nil, nothing follows)
	BodyNotReplayable               // a REST body sent streamed (no GetBody; unsafe, or over MaxReplayBody)
	Confirming                      // a WaitVisible good read; no failure, and its wait no retry
)

var reasonNames = [...]string{
	Retry:           "retry",
	NotRetryable:    "not retryable",
	Unsafe:          "unsafe to retry",
	Disabled:        "retries disabled for the call",
	MaxAttempts:     "max attempts reached",
	DeadlineReached: "retry deadline reached",
	ContextDeadline: "context deadline too near",
	ContextDone:     "context ended",
	BudgetExhausted: "retry budget exhausted",
	ServerPushback:  "server pushback",
	Succeeded:       "succeeded",

	BodyNotReplayable: "request body not replayable",
	Confirming:        "confirming",
}

// reasonTokens are the reasons as iamretry.reason's values on every outlet
// (logs, span events, metrics): the one table; the give-ups use the names
// the instruments' contract gives them.
var reasonTokens = [...]string{
	Retry:           "retry",
	NotRetryable:    "not_retryable",
	Unsafe:          "unsafe",
	Disabled:        "disabled",
	MaxAttempts:     "max_attempts",
	DeadlineReached: "deadline",
	ContextDeadline: "context_deadline",
	ContextDone:     "context_done",
	BudgetExhausted: "budget",
	ServerPushback:  "pushback",
	Succeeded:       "succeeded",

	BodyNotReplayable: "body_not_replayable",
	Confirming:        "confirming",
}

// givingUp is the one table of the reasons that give up: a call that ends
// with one of them ended with a retryable failure that was not retried
// (the gave_up instrument, the iamretry.gave_up span event, a Warn log;
// Unsafe is logged at Info). ContextDone gives up only when the context
// ended during a wait or during an attempt that failed transiently
// (givesUp).
var givingUp = [...]bool{
	Unsafe:            true,
	MaxAttempts:       true,
	DeadlineReached:   true,
	ContextDeadline:   true,
	BudgetExhausted:   true,
	ServerPushback:    true,
	ContextDone:       true,
	BodyNotReplayable: true,
}

// mayGiveUp reports whether r is in givingUp.
func (r Reason) mayGiveUp() bool { return int(r) < len(givingUp) && givingUp[r] }

// givesUp reports whether a ends a call with a retryable failure that was
// not retried: a reason of givingUp; ContextDone only when the context
// ended during a wait (the error is an interruptedError) or during an
// attempt that failed transiently.
func givesUp(a *Attempt) bool {
	if a.Reason == ContextDone {
		return isInterrupted(a.Err) || a.Class == codes.Transient
	}
	return a.Reason.mayGiveUp()
}

func (r Reason) token() string {
	if int(r) < len(reasonTokens) {
		return reasonTokens[r]
	}
	return "unknown"
}

// MarshalText returns the reason's token, iamretry.reason's value on every
// outlet ("max_attempts", ...); it fails for a value that is not a Reason.
func (r Reason) MarshalText() ([]byte, error) {
	if int(r) >= len(reasonTokens) {
		return nil, errors.New("iamretry: unknown Reason(" + strconv.Itoa(int(r)) + ")")
	}
	return []byte(reasonTokens[r]), nil
}

// String returns a short phrase for the reason, such as "unsafe to retry".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}
