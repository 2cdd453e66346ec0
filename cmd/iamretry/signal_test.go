package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childMainEnv makes the test binary run main() instead of the tests, so a
// test can start the real command as a child process and signal it.
const childMainEnv = "IAMRETRY_TEST_RUN_MAIN"

func init() {
	if os.Getenv(childMainEnv) == "1" {
		main() // exits
	}
}

// longSimulation runs for many minutes unless it is stopped: a million
// clients that never give up.
var longSimulation = []string{"simulate", "--clients", "1000000", "--deadline", "0", "--contention"}

// TestSimulateEndsOnSignal: SIGINT and SIGTERM end a long `iamretry
// simulate` promptly (the issue's bound: 1 s; asserted here with a generous
// margin for a loaded machine and the race detector), with the context's
// error and a failure exit code, not by the signal's default action.
func TestSimulateEndsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			// The child must have installed its handler before the signal
			// comes; if it has not (it died of the signal itself), try
			// again with a longer head start.
			for head := 300 * time.Millisecond; ; head *= 2 {
				took, state, stderr := signalChild(t, exe, sig, head)
				if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					if head > 10*time.Second {
						t.Fatalf("the child was killed by %v itself even after a %v head start", sig, head)
					}
					continue
				}
				t.Logf("%v: ended %v after the signal, exit code %d", sig, took, state.ExitCode())
				if state.ExitCode() != exitFailure {
					t.Errorf("exit code %d, want %d; stderr: %s", state.ExitCode(), exitFailure, stderr)
				}
				if !strings.Contains(stderr, "context canceled") {
					t.Errorf("stderr %q does not say the run was cancelled", stderr)
				}
				if took > 10*time.Second {
					t.Errorf("simulate took %v to end after %v", took, sig)
				}
				return
			}
		})
	}
}

// signalChild starts the long simulation as a child process, sends it sig
// after head, and returns how long it took to end after the signal.
func signalChild(t *testing.T, exe string, sig syscall.Signal, head time.Duration) (time.Duration, *os.ProcessState, string) {
	t.Helper()
	cmd := exec.Command(exe, longSimulation...)
	cmd.Env = append(os.Environ(), childMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the simulation ended before the signal: %v; stderr: %s", err, stderr.String())
	case <-time.After(head):
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return time.Since(sent), cmd.ProcessState, stderr.String()
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("simulate still ran 60 s after %v", sig)
		return 0, nil, ""
	}
}

// TestSimulateStopsWhenContextEnds: simulate stops when its context ends,
// in process (the contention phase is pinned in internal/herd).
func TestSimulateStopsWhenContextEnds(t *testing.T) {
	for _, args := range [][]string{
		{"simulate", "--clients", "1000000", "--deadline", "0"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		r := runCmdCtx(t, ctx, args...)
		took := time.Since(start)
		cancel()
		if r.code != exitFailure || !strings.Contains(r.stderr, "context canceled") {
			t.Errorf("%v: exit %d, stderr %q; want a failure saying the context was cancelled", args, r.code, r.stderr)
		}
		if took > 10*time.Second {
			t.Errorf("%v: ran %v after its context was cancelled at 200ms", args, took)
		}
	}
}
