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

// Disable returns a call option that turns retries off for one call, passed
// through gax: gax.WithGRPCOptions(interceptor.Disable()). REST clients
// ignore it: DisableContext works on every face.
func Disable() grpc.CallOption { return disableOpt }

// RetryNotFound returns a call option that makes one call retry NOT_FOUND
// (404), for a read that follows a create, even on an unsafe method. Not for a
// delete, whose replay meets NOT_FOUND for its own success.
// RetryNotFoundContext works on every face.
func RetryNotFound() grpc.CallOption { return notFoundOpt }

// CallDeadline returns a call option that sets this call's retry deadline in
// place of WithDeadline's (0: none of its own); a sooner context deadline
// still wins. A negative d fails the call at once with INVALID_ARGUMENT.
// DeadlineContext works on every face.
func CallDeadline(d time.Duration) grpc.CallOption {
	return &callOption{kind: callDeadline, d: d, early: d < 0}
}

// CallMaxAttempts returns a call option that caps this call's attempts, the
// first included, in place of WithMaxAttempts's (1: no retry, 0: no cap). A
// negative n fails the call at once with INVALID_ARGUMENT.
// MaxAttemptsContext works on every face.
func CallMaxAttempts(n int) grpc.CallOption {
	return &callOption{kind: callMaxAttempts, n: n, early: n < 0}
}

// CallPerAttemptTimeout returns a call option that gives each attempt of this
// call its own timeout in place of WithPerAttemptTimeout's (0: none). A
// negative d fails the call with INVALID_ARGUMENT. It is gRPC-only (a context
// form would cost every call a lookup). Without the interceptor, every call
// option does nothing.
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
