package interceptor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/iamretry/iamretry/interceptor"
)

// TestWaitVisibleContextAttemptCapWins (issue 33 item 4): the context form
// of the attempt cap wins over the Retrier's, as on every face: under
// MaxAttemptsContext(ctx, 0) (no cap) a Retrier capped at 2 makes its 3
// reads; under MaxAttemptsContext(ctx, 2) an uncapped Retrier refuses them,
// naming the context form.
func TestWaitVisibleContextAttemptCapWins(t *testing.T) {
	t.Parallel()
	capped := newHarness(t, interceptor.WithMaxAttempts(2))
	s := &readScript{}
	ctx := interceptor.MaxAttemptsContext(context.Background(), 0)
	if v, err := interceptor.WaitVisible(ctx, capped.r, "get robot", s.read); err != nil || s.reads != 3 || v != 3 {
		t.Fatalf("under MaxAttemptsContext(ctx, 0): value %d, %d reads, err %v; want 3, 3, nil", v, s.reads, err)
	}

	s = &readScript{}
	ctx = interceptor.MaxAttemptsContext(context.Background(), 4)
	if _, err := interceptor.WaitVisible(ctx, capped.r, "get robot", s.read); err != nil || s.reads != 3 {
		t.Fatalf("under MaxAttemptsContext(ctx, 4): %d reads, err %v; want 3, nil", s.reads, err)
	}

	uncapped := newHarness(t)
	s = &readScript{}
	ctx = interceptor.MaxAttemptsContext(context.Background(), 2)
	_, err := interceptor.WaitVisible(ctx, uncapped.r, "get robot", s.read)
	if err == nil || s.reads != 0 {
		t.Fatalf("3 reads under MaxAttemptsContext(ctx, 2): %d reads, err %v; want a refusal before any read", s.reads, err)
	}
	for _, w := range []string{"3 consecutive good reads", "MaxAttemptsContext(ctx, 2)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}
