package interceptor_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

func TestInvalidOptionsAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opt  interceptor.Option
		want string
	}{
		{interceptor.WithDeadline(-time.Second), "WithDeadline(-1s)"},
		{interceptor.WithMaxAttempts(-1), "WithMaxAttempts(-1)"},
		{interceptor.WithPerAttemptTimeout(-1), "WithPerAttemptTimeout(-1ns)"},
		{interceptor.WithMaxBackoff(0), "WithMaxBackoff(0s)"},
		{interceptor.WithMaxBackoff(-time.Second), "WithMaxBackoff(-1s)"},
		{interceptor.WithMaxBackoff(time.Millisecond), "maximum backoff (1ms) is less than the backoff's Initial (1s)"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: 0, Multiplier: 2, Max: time.Second}), "Initial is 0s"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: -1, Multiplier: 2, Max: time.Second}), "Initial is -1ns"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: 1, Multiplier: 0.5, Max: time.Second}), "Multiplier is 0.5"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: 1, Multiplier: math.NaN(), Max: time.Second}), "Multiplier is NaN"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: 1, Multiplier: math.Inf(1), Max: time.Second}), "Multiplier is +Inf"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: 1, Multiplier: 2}), "Max is 0s"},
		{interceptor.WithBackoff(interceptor.Backoff{Initial: time.Minute, Multiplier: 2, Max: time.Second}), "maximum backoff (1s) is less than the backoff's Initial (1m0s)"},
		{interceptor.WithClock(nil), "WithClock(nil)"},
		{interceptor.WithRandom(nil), "WithRandom(nil)"},
		{interceptor.WithClassifier(nil), "WithClassifier(nil)"},
		{interceptor.WithSafeToRetry(nil), "WithSafeToRetry(nil)"},
		{interceptor.WithObserver(nil), "WithObserver(nil)"},
		{interceptor.WithLogger(nil), "WithLogger(nil)"},
		{nil, "option 1 of 1 is nil"},
	} {
		r, err := interceptor.New(tc.opt)
		if err == nil || r != nil {
			t.Errorf("%s: accepted", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q does not name %q", err, tc.want)
		}
		func() {
			defer func() {
				p := recover()
				if p == nil {
					t.Errorf("%s: UnaryClientInterceptor did not panic", tc.want)
				} else if pe, ok := p.(error); !ok || pe.Error() != err.Error() {
					t.Errorf("%s: panicked with %v, want New's error", tc.want, p)
				}
			}()
			interceptor.UnaryClientInterceptor(tc.opt)
		}()
	}
}

func TestEveryInvalidOptionIsNamed(t *testing.T) {
	t.Parallel()
	_, err := interceptor.New(interceptor.WithDeadline(-1), interceptor.WithMaxAttempts(-2), interceptor.WithClock(nil))
	for _, want := range []string{"WithDeadline", "WithMaxAttempts(-2)", "WithClock(nil)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v does not name %s", err, want)
		}
	}
}

func TestZeroValuesMeanNone(t *testing.T) {
	t.Parallel()
	for _, opt := range []interceptor.Option{interceptor.WithDeadline(0), interceptor.WithMaxAttempts(0), interceptor.WithPerAttemptTimeout(0)} {
		if _, err := interceptor.New(opt); err != nil {
			t.Fatal(err)
		}
	}
	r, err := interceptor.New(interceptor.WithBackoff(interceptor.Backoff{Initial: time.Second, Multiplier: 1, Max: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Backoff().Jitter == nil {
		t.Fatal("a nil Jitter should become the documented one")
	}
	if got := r.Backoff().Delay(3, 0.5); got != time.Second {
		t.Fatalf("Delay = %v", got)
	}
}

func TestNewErrorIsJoined(t *testing.T) {
	t.Parallel()
	_, err := interceptor.New(interceptor.WithDeadline(-1))
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 1 {
		t.Fatalf("err %v", fmt.Sprint(err))
	}
}

// TestMaxBackoffWinsInEitherOrder: WithMaxBackoff replaces a WithBackoff's
// Max whether it comes before or after it; WithBackoff's other fields stay.
func TestMaxBackoffWinsInEitherOrder(t *testing.T) {
	b := interceptor.Backoff{Initial: 2 * time.Second, Multiplier: 3, Max: 10 * time.Second, Jitter: interceptor.NoJitter}
	for name, opts := range map[string][]interceptor.Option{
		"WithBackoff, WithMaxBackoff": {interceptor.WithBackoff(b), interceptor.WithMaxBackoff(time.Minute)},
		"WithMaxBackoff, WithBackoff": {interceptor.WithMaxBackoff(time.Minute), interceptor.WithBackoff(b)},
	} {
		r, err := interceptor.New(opts...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := r.Backoff()
		if got.Max != time.Minute || got.Initial != b.Initial || got.Multiplier != b.Multiplier {
			t.Errorf("%s: Backoff %+v, want %+v with Max 1m", name, got, b)
		}
		if d := got.Delay(5, 0); d != time.Minute {
			t.Errorf("%s: Delay(5) = %v, want 2s*3^5 capped at 1m", name, d)
		}
	}
	// The check against Initial applies to the Max that wins.
	for _, opts := range [][]interceptor.Option{
		{interceptor.WithMaxBackoff(time.Second), interceptor.WithBackoff(b)},
		{interceptor.WithBackoff(b), interceptor.WithMaxBackoff(time.Second)},
	} {
		if _, err := interceptor.New(opts...); err == nil || !strings.Contains(err.Error(), "maximum backoff (1s) is less than the backoff's Initial (2s)") {
			t.Errorf("WithMaxBackoff(1s) below Initial 2s: %v", err)
		}
	}
}
