package interceptor

import (
	"context"
	"errors"
	"fmt"

	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor/internal/ctxforms"
	"github.com/iamretry/iamretry/internal/googleerr"
)

// DefaultConsecutiveReads is how many reads in a row WaitVisible wants by
// default, as Terraform's Google provider reads a new service account.
const DefaultConsecutiveReads = 3

// defaultPermissionDeniedRetries is how many PERMISSION_DENIED answers
// WaitVisible retries before the first good read (PermissionDeniedRetries).
const defaultPermissionDeniedRetries = 5

// reasonIAMPermissionDenied is the google.rpc.ErrorInfo reason IAM gives a
// PERMISSION_DENIED that may mean "not visible to you yet".
const reasonIAMPermissionDenied = "IAM_PERMISSION_DENIED"

// VisibleOption configures one WaitVisible call; WaitVisible refuses a nil or
// invalid one with an error naming it.
type VisibleOption func(*visibleConfig)

type visibleConfig struct {
	reads     int // consecutive good reads wanted
	pdRetries int // PERMISSION_DENIED answers retried before the first good read
	errs      []error
}

// ConsecutiveReads sets how many reads in a row WaitVisible wants (default
// DefaultConsecutiveReads); n >= 1.
func ConsecutiveReads(n int) VisibleOption {
	return func(c *visibleConfig) {
		if n < 1 {
			c.errs = append(c.errs, fmt.Errorf("ConsecutiveReads(%d): the count of consecutive good reads must be >= 1 (default %d)", n, DefaultConsecutiveReads))
			return
		}
		c.reads = n
	}
}

// PermissionDeniedRetries caps the PERMISSION_DENIED answers (with ErrorInfo
// reason IAM_PERMISSION_DENIED or none: a not yet visible account) WaitVisible
// retries before its first good read (default 5); n >= 0.
func PermissionDeniedRetries(n int) VisibleOption {
	return func(c *visibleConfig) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("PermissionDeniedRetries(%d): the cap must be >= 0 (0: never retry PERMISSION_DENIED; default %d)", n, defaultPermissionDeniedRetries))
			return
		}
		c.pdRetries = n
	}
}

// UnconfirmedError is WaitVisible's error when it ended (deadline, attempt
// cap, context) after a good read but short of the reads in a row it wanted;
// that read's value is returned beside it.
type UnconfirmedError struct {
	Name  string // the name given to WaitVisible
	Reads int    // consecutive good reads made
	Want  int    // consecutive good reads wanted (ConsecutiveReads)
}

// Error says how many consecutive good reads were made of how many wanted.
func (e *UnconfirmedError) Error() string {
	return fmt.Sprintf("iamretry: WaitVisible(%s): %d of %d consecutive good reads; not confirmed visible yet", e.Name, e.Reads, e.Want)
}

// WaitVisible reads a new resource until ConsecutiveReads reads in a row
// succeed, spaced by the backoff's Initial, and returns the last read's value.
// It retries NOT_FOUND, what r retries, and PERMISSION_DENIED before the first
// good read (PermissionDeniedRetries), on r's engine as Do does, and owns the
// reads: read must pass its ctx on. It returns the value with nil, the last
// error unchanged, an *UnconfirmedError after a good read, or a context-coded
// error wrapping one. A nil or unbuilt r, a nil read, an invalid option or a
// count above the attempt cap is refused before any read.
func WaitVisible[T any](ctx context.Context, r *Retrier, name string, read func(context.Context) (T, error), opts ...VisibleOption) (T, error) {
	var zero T
	c := visibleConfig{reads: DefaultConsecutiveReads, pdRetries: defaultPermissionDeniedRetries}
	for i, o := range opts {
		if o == nil {
			c.errs = append(c.errs, fmt.Errorf("option %d of %d is nil", i+1, len(opts)))
			continue
		}
		o(&c)
	}
	if r == nil {
		c.errs = append(c.errs, errors.New("the Retrier is nil"))
	} else if !r.built() {
		c.errs = append(c.errs, errNotBuilt)
	}
	if read == nil {
		c.errs = append(c.errs, errors.New("read is nil"))
	}
	if r != nil {
		// The context form wins, as on every face (0: no cap).
		capped, by := r.cfg.maxAttempts, fmt.Sprintf("the Retrier's WithMaxAttempts(%d)", r.cfg.maxAttempts)
		if k := ctxforms.Of(ctx); k.HasMaxAttempts {
			capped, by = k.MaxAttempts, fmt.Sprintf("MaxAttemptsContext(ctx, %d)", k.MaxAttempts)
		}
		if capped > 0 && capped < c.reads {
			c.errs = append(c.errs, fmt.Errorf("%d consecutive good reads cannot be made within %s", c.reads, by))
		}
	}
	if len(c.errs) > 0 {
		for i, e := range c.errs {
			c.errs[i] = fmt.Errorf("iamretry: WaitVisible(%s): %w", name, e)
		}
		return zero, errors.Join(c.errs...)
	}
	v := &visibility[T]{name: name, cfg: c, read: read}
	j := &job{
		method:        name,
		retryNotFound: true,
		deadline:      r.cfg.deadline,
		maxAttempts:   r.cfg.maxAttempts,
		judge:         v.judge,
		step:          v.step,
	}
	err := r.do(ctx, j, v.attempt)
	return v.last, err
}

// visibility is the state of one WaitVisible call. The engine runs its
// reads and asks its judge and step one after another, on one goroutine.
type visibility[T any] struct {
	name   string
	cfg    visibleConfig
	read   func(context.Context) (T, error)
	last   T    // the last read's value
	good   int  // consecutive good reads so far
	seen   bool // a read has succeeded
	failed int  // failed reads so far
	pd     int  // PERMISSION_DENIED answers retried
}

// attempt makes one read and says whether the wait is over: nil after the
// wanted good reads in a row, an *UnconfirmedError after a good read short
// of them, the read's own error after a bad one.
func (v *visibility[T]) attempt(ctx context.Context) error {
	val, err := v.read(ctx)
	v.last = val
	if err != nil {
		v.good = 0
		v.failed++
		return err
	}
	v.good++
	v.seen = true
	if v.good >= v.cfg.reads {
		return nil
	}
	return &UnconfirmedError{Name: v.name, Reads: v.good, Want: v.cfg.reads}
}

// judge classifies what only a visibility wait decides: a good read short of
// the count (Propagation: read again), NOT_FOUND (Propagation, always),
// PERMISSION_DENIED (Propagation within the rules WaitVisible documents,
// else Permanent). Anything else is left to the Retrier's classifier.
func (v *visibility[T]) judge(err error) (codes.Class, bool) {
	if _, ok := err.(*UnconfirmedError); ok {
		return codes.Propagation, true
	}
	code, reason, ok := googleerr.CodeAndReason(err)
	if !ok {
		return codes.Permanent, false
	}
	switch code {
	case grpccodes.NotFound:
		return codes.Propagation, true
	case grpccodes.PermissionDenied:
		if v.seen || v.pd >= v.cfg.pdRetries || (reason != "" && reason != reasonIAMPermissionDenied) {
			return codes.Permanent, true
		}
		v.pd++
		return codes.Propagation, true
	}
	return codes.Permanent, false
}

// step gives the Backoff step of the next wait: the first after a good
// read (it confirms, and spends no budget), else the step of the failed
// reads so far.
func (v *visibility[T]) step() (int, bool) {
	if v.good > 0 {
		return 0, true
	}
	return v.failed - 1, false
}
