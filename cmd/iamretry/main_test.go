package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/iamretry/iamretry/iamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(cleanupM{m})
}

// cleanupM removes what the tests built (the apply tests' binary) after
// they ran.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	defer removeBuiltBinary()
	return c.m.Run()
}

// result is what one in-process run of the command printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

func runCmd(t *testing.T, args ...string) result {
	t.Helper()
	return runCmdCtx(t, context.Background(), args...)
}

func runCmdCtx(t *testing.T, ctx context.Context, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader on different
// goroutines; waitLine wakes on each write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // closed (and replaced) by each Write
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		close(b.written)
		b.written = nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLine waits until a whole line starting with prefix was written and
// returns the rest of it; it gives up when done is closed (the writer
// ended) without such a line. It has no timeout of its own: a writer that
// hangs is the test binary's -timeout's to report, not a race with the
// wall clock that a loaded machine loses.
func (b *syncBuffer) waitLine(prefix string, done <-chan struct{}) (string, bool) {
	for ended := false; ; {
		b.mu.Lock()
		s := b.buf.String()
		if b.written == nil {
			b.written = make(chan struct{})
		}
		written := b.written
		b.mu.Unlock()
		for _, line := range strings.SplitAfter(s, "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok && strings.HasSuffix(rest, "\n") {
				return strings.TrimSuffix(rest, "\n"), true
			}
		}
		if ended {
			return "", false // the writer ended, and all it wrote was read
		}
		select {
		case <-written:
		case <-done:
			ended = true // look once more at what it wrote before it ended
		}
	}
}

// clockCmd returns a runCmd whose command runs as a thread of clock: a
// policy Updater's waits run on a goroutine that the command starts with
// its context, which only a thread of the clock may do.
func clockCmd(clock *iamtest.VirtualClock) func(t *testing.T, args ...string) result {
	return func(t *testing.T, args ...string) result {
		t.Helper()
		var r result
		clock.Go(context.Background(), 1, func(ctx context.Context, _ int) { r = runCmdCtx(t, ctx, args...) })
		return r
	}
}
