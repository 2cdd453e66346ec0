package interceptor

import (
	"errors"
	"strconv"
	"time"

	"github.com/iamretry/iamretry/codes"
)

// Attempt describes one failed attempt and what the Retrier decided about
// it. Observers (WithObserver) receive one after every failed attempt, one
// with Reason Confirming and Err nil after each good WaitVisible read short
// of its count, and one more, with Reason Succeeded and Err nil, when a call
// that was retried succeeds. A call that succeeds at once reports nothing.
type Attempt struct {
	// Method is the full gRPC method ("/google.iam.v1.IAMPolicy/GetIamPolicy"),
	// the name given to Retrier.Do, or policy.UpdateMethod for a policy
	// Updater's read-modify-write (a Transact's Method).
	Method string
	// Resource is the resource of a read-modify-write (Transact, a policy
	// Updater), ""
	// elsewhere: nothing needs to parse it out of Method.
	Resource string
	// N is the attempt's number: 1 for the first attempt.
	N int
	// Err is the error the attempt failed with; nil in the final report of a
	// call that succeeded after retries (Reason Succeeded).
	Err error
	// Class is Err's retry class (the zero Class, Permanent, when Err is nil).
	Class codes.Class
	// Wait is the wait before the next attempt; 0 when none follows.
	Wait time.Duration
	// Elapsed is the time since the call's first failure (0 for the first
	// attempt): the success path reads no clock, so the call's start is not
	// known.
	Elapsed time.Duration
	// Retrying tells whether another attempt follows.
	Retrying bool
	// Reason says why the Retrier retries or stops.
	Reason Reason
}

// Reason says why a Retrier retried a failed attempt or stopped.
type Reason uint8

const (
	// Retry: the failure is retryable and the schedule allows another attempt.
	Retry Reason = iota
	// NotRetryable: the failure's class is not retried (Permanent, Conflict
	// outside a read-modify-write, Propagation without the opt-in).
	NotRetryable
	// Unsafe: the failure is ambiguous (the server may have acted) and the
	// method and request are not safe to send again.
	Unsafe
	// Disabled: the call passed Disable().
	Disabled
	// MaxAttempts: the call made as many attempts as WithMaxAttempts allows.
	MaxAttempts
	// DeadlineReached: the next wait would end after the retry deadline.
	DeadlineReached
	// ContextDeadline: the next wait would end after the context's deadline.
	ContextDeadline
	// ContextDone: the caller's context ended (during an attempt or a wait).
	ContextDone
	// BudgetExhausted: the Retrier's retry budget refused the retry
	// (WithRetryBudget): too many of its recent calls were retries.
	BudgetExhausted
	// ServerPushback: the server asked not to retry, with a negative or
	// malformed grpc-retry-pushback-ms trailer (WithPushback).
	ServerPushback
	// Succeeded: the final report of a call that was retried and whose
	// attempt N succeeded (Err is nil, nothing follows).
	Succeeded
	// BodyNotReplayable: the failure would have been retried, but the REST
	// request was sent once with its body streamed: it has no GetBody and
	// either it was not to be replayed (unsafe to send again, retries
	// disabled) or its body is longer than MaxReplayBody.
	BodyNotReplayable
	// Confirming: a WaitVisible read succeeded, short of the reads in a row
	// it wants: another read follows after Wait. Err is nil; it is no
	// failure, and its wait is no retry (nor counted or budgeted as one).
	Confirming
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

// MarshalText returns the reason as a token, the value of
// iamretry.reason on the logs, instruments and spans: "retry",
// "not_retryable", "unsafe", "deadline", "budget", ... It fails for a value
// that is none of the Reasons above. encoding/json writes a Reason as this
// token.
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
