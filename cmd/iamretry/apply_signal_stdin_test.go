package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// blockedStdin is a stdin whose writer never finishes (a producer piping
// into "apply -f -" that hangs): Read blocks until release is closed.
type blockedStdin struct {
	sent    bool
	release chan struct{}
}

func (b *blockedStdin) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, "resources:\n"), nil
	}
	<-b.release
	return 0, io.EOF
}

// TestApplySignalWhileReadingStdin: a signal while the file is still being
// read from stdin stops the command at once with the signal's exit code,
// and nothing is sent; it does not wait for a producer that never ends.
func TestApplySignalWhileReadingStdin(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			in := &blockedStdin{release: make(chan struct{})}
			old := applyStdin
			applyStdin = in
			defer func() { applyStdin = old }()
			var once sync.Once
			release := func() { once.Do(func() { close(in.release) }) }
			defer release()
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errors.New(sig.String() + " received")) // a signal at once
			done := make(chan result, 1)
			go func() { done <- runCmdCtx(t, ctx, "apply", "-f", "-", "--endpoint", "127.0.0.1:1", "--insecure") }()
			select {
			case r := <-done:
				if want := 128 + int(sig); r.code != want {
					t.Fatalf("exit %d, want %d:\n%s%s", r.code, want, r.stdout, r.stderr)
				}
				if !strings.Contains(r.stderr, "nothing was sent") {
					t.Errorf("stderr does not say nothing was sent:\n%s", r.stderr)
				}
			case <-time.After(10 * time.Second):
				release()
				<-done
				t.Fatal("apply -f - kept reading stdin after a signal")
			}
		})
	}
}
