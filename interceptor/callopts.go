package interceptor

import (
	"fmt"
	"time"

	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// callOption is every per-call option of this package: one type, so that
// the interceptor finds them with one type assertion per call option. It
// embeds grpc.EmptyCallOption, so gRPC ignores it: it is harmless on a
// connection without the interceptor and need not be filtered out.
// Disable() and RetryNotFound() are single shared values, so passing one
// allocates nothing.
type callOption struct {
	grpc.EmptyCallOption
	// early marks an option the first attempt must see: an invalid value
	// (the call fails before it is sent) or a per-attempt timeout other
	// than 0. The
	// others (Disable, RetryNotFound, CallDeadline, CallMaxAttempts) matter
	// only once an attempt failed, so a call that succeeds at once never
	// reads them: the success path only looks for an early one.
	early bool
	kind  callKind
	d     time.Duration // CallDeadline, CallPerAttemptTimeout
	n     int           // CallMaxAttempts
}

type callKind uint8

const (
	callDisable callKind = iota
	callNotFound
	callDeadline
	callMaxAttempts
	callPerAttempt
)

var (
	disableOpt  = &callOption{kind: callDisable}
	notFoundOpt = &callOption{kind: callNotFound}
)

// Disable returns a call option that turns retries off for one call: its
// first failure is returned as it is. On a cloud.google.com/go client pass it
// through gax: client.GetIamPolicy(ctx, req, gax.WithGRPCOptions(interceptor.Disable())).
// A gRPC call option is ignored by a REST client: DisableContext is the
// form that works on every face and transport.
func Disable() grpc.CallOption { return disableOpt }

// RetryNotFound returns a call option that makes one call retry NOT_FOUND
// (HTTP 404) as a transient failure: use it for a read that follows the
// creation of the resource it reads, since IAM reads are eventually
// consistent. A NOT_FOUND is a definite rejection (the server did nothing),
// so it is retried even on a method that is not safe to replay
// (CreateServiceAccountKey on an account created moments ago); ambiguous
// failures of such a method are still never retried. Do not pass it to a
// delete: a delete replayed after a lost answer meets NOT_FOUND because it
// succeeded, and would retry its own success until the deadline.
// RetryNotFoundContext is the form that works on every face and transport.
func RetryNotFound() grpc.CallOption { return notFoundOpt }

// CallDeadline returns a call option that sets this call's retry deadline,
// in place of the Retrier's (WithDeadline): how long the call keeps
// retrying, counted from its first failure; 0 means none of its own (the
// context's deadline and the attempt cap rule). A CI step can give one call
// the guidance's 300 s without a second client.
//
// The call's context deadline still wins when it is sooner, and a
// cloud.google.com/go (GAPIC) method's own timeout is such a deadline: the
// admin client's methods that have one (60 s) put it on the context of any
// call whose context has none, so it cuts a longer CallDeadline short. Lift
// it by giving the call a context with a deadline of your own
// (context.WithTimeout(ctx, 6*time.Minute)): gax applies its timeout only to
// a context without one. Or pass gax.WithTimeout(d) with the call. A client
// built by NewClient has no such timeout: it is each attempt's instead.
// DeadlineContext is the form of this option for every face.
//
// A negative d fails the call at once with INVALID_ARGUMENT naming the
// option, before anything is sent. On a connection without the interceptor
// the option does nothing.
func CallDeadline(d time.Duration) grpc.CallOption {
	return &callOption{kind: callDeadline, d: d, early: d < 0}
}

// CallMaxAttempts returns a call option that caps this call's attempts, the
// first included, in place of the Retrier's cap (WithMaxAttempts): 1 never
// retries, 0 means no cap (the deadline rules). A negative n fails the call
// at once with INVALID_ARGUMENT naming the option, before anything is sent.
// On a connection without the interceptor the option does nothing.
// MaxAttemptsContext is the form of this option for every face.
func CallMaxAttempts(n int) grpc.CallOption {
	return &callOption{kind: callMaxAttempts, n: n, early: n < 0}
}

// CallPerAttemptTimeout returns a call option that gives each attempt of
// this call its own timeout, in place of the Retrier's
// (WithPerAttemptTimeout), with the same rules: min(d, what is left of the
// context and of the retry deadline), and an attempt cut off by it is
// retried while the caller's context lives. 0 means none for this call. Like
// any context deadline, a GAPIC method's own timeout (see CallDeadline) still
// bounds the whole call. Like WithPerAttemptTimeout, a d above 0 costs a
// context and a timer per attempt, the first included (the other per-call
// options cost a call that succeeds at once no allocation). A negative d
// fails the call at once with INVALID_ARGUMENT naming the option, before
// anything is sent. On a connection without the interceptor the option does
// nothing. It has no context form (unlike Disable, RetryNotFound,
// CallDeadline and CallMaxAttempts): it applies to the first attempt, so a
// context form would cost every call a context lookup on the success path.
// Over REST, WithPerAttemptTimeout sets one for every request.
func CallPerAttemptTimeout(d time.Duration) grpc.CallOption {
	// 0 needs the first attempt only on a Retrier with a per-attempt
	// timeout of its own, and such a Retrier reads every call's options
	// before the first attempt anyway.
	return &callOption{kind: callPerAttempt, d: d, early: d != 0}
}

// callSettings is what a call's per-call options say; the zero value is
// "none given".
type callSettings struct {
	disabled, notFound bool

	deadline, perAttempt       time.Duration
	maxAttempts                int
	hasDeadline, hasPerAttempt bool
	hasMaxAttempts             bool

	invalid error // the first invalid option, as an INVALID_ARGUMENT status
}

// readCallOptions reads the per-call options of opts; a later option of a
// kind overrides an earlier one.
func readCallOptions(opts []grpc.CallOption) callSettings {
	var s callSettings
	for _, o := range opts {
		co, ok := o.(*callOption)
		if !ok {
			continue
		}
		switch co.kind {
		case callDisable:
			s.disabled = true
		case callNotFound:
			s.notFound = true
		case callDeadline:
			if co.d < 0 {
				s.refuse("CallDeadline(%v): the retry deadline must be >= 0 (0: none of its own; the context's deadline rules)", co.d)
			}
			s.deadline, s.hasDeadline = co.d, true
		case callMaxAttempts:
			if co.n < 0 {
				s.refuse("CallMaxAttempts(%d): the attempt count must be >= 0 (0: no cap; 1: no retries)", co.n)
			}
			s.maxAttempts, s.hasMaxAttempts = co.n, true
		case callPerAttempt:
			if co.d < 0 {
				s.refuse("CallPerAttemptTimeout(%v): the per-attempt timeout must be >= 0 (0: none)", co.d)
			}
			s.perAttempt, s.hasPerAttempt = co.d, true
		}
	}
	return s
}

func (s *callSettings) refuse(format string, args ...any) {
	if s.invalid == nil {
		s.invalid = status.Error(grpccodes.InvalidArgument, "iamretry: "+fmt.Sprintf(format, args...)+"; the call was not sent")
	}
}

// hasEarlyOption reports whether opts hold an option of this package that
// the first attempt must see (callOption.early). It is the only thing the
// success path does with the call options: one type assertion each.
func hasEarlyOption(opts []grpc.CallOption) bool {
	for _, o := range opts {
		if co, ok := o.(*callOption); ok && co.early {
			return true
		}
	}
	return false
}
