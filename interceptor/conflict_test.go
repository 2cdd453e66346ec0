package interceptor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

func TestConflictBackoffDelay(t *testing.T) {
	s := interceptor.SpreadConflicts
	if got := s.Delay(0, 0); got != 50*time.Millisecond {
		t.Errorf("first rerun at r=0: %v, want 50ms", got)
	}
	// The median: sqrt(50ms * 30s).
	if got := s.Delay(0, 0.5); got < 1224*time.Millisecond || got > 1225*time.Millisecond {
		t.Errorf("first rerun at r=0.5 (the median): %v, want 1.2247s", got)
	}
	for _, r := range []float64{0, 0.25, 0.5, 0.75, 0.999999} {
		if got := s.Delay(0, r); got < 50*time.Millisecond || got >= 30*time.Second {
			t.Errorf("first rerun at r=%v: %v, want in [50ms, 30s)", r, got)
		}
		for _, n := range []int{1, 2, 10, 1000} {
			if got := s.Delay(n, r); got <= 0 || got > 15*time.Second {
				t.Errorf("rerun %d at r=%v: %v, want in (0, 15s]", n, r, got)
			}
		}
		for _, n := range []int{0, 1, 5} {
			if got, want := interceptor.DocumentedConflicts.Delay(n, r), interceptor.DefaultBackoff().Delay(n, r); got != want {
				t.Errorf("DocumentedConflicts.Delay(%d, %v) = %v, want the default backoff's %v", n, r, got, want)
			}
		}
	}
	if s.String() != "SpreadConflicts" || interceptor.DocumentedConflicts.String() != "DocumentedConflicts" || interceptor.ConflictBackoff(9).String() != "ConflictBackoff(9)" {
		t.Error("String")
	}
}

// TestConflictBackoffRefusedWhereItDoesNotApply: only an Updater reruns
// after a conflict, so every other face refuses the option by name.
func TestConflictBackoffRefusedWhereItDoesNotApply(t *testing.T) {
	for _, s := range []interceptor.ConflictBackoff{interceptor.SpreadConflicts, interceptor.DocumentedConflicts} {
		r, err := interceptor.New(interceptor.WithConflictBackoff(s))
		if err == nil || r != nil || !strings.Contains(err.Error(), "WithConflictBackoff applies only to a policy Updater") {
			t.Errorf("New(WithConflictBackoff(%v)) = %v, %v", s, r, err)
		}
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(p.(error).Error(), "WithConflictBackoff") {
				t.Errorf("UnaryClientInterceptor: recovered %v", p)
			}
		}()
		interceptor.UnaryClientInterceptor(interceptor.WithConflictBackoff(interceptor.DocumentedConflicts))
	}()
	_, err := interceptor.New(interceptor.WithConflictBackoff(7))
	if err == nil || !strings.Contains(err.Error(), "WithConflictBackoff(ConflictBackoff(7)): unknown schedule") {
		t.Errorf("unknown schedule: %v", err)
	}
}
