package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSimulateGolden(t *testing.T) {
	r := runCmd(t, "simulate", "--seed", "1", "--contention")
	if r.code != exitOK {
		t.Fatalf("simulate exited %d: %s", r.code, r.stderr)
	}
	golden(t, "simulate.golden", r.stdout)
	again := runCmd(t, "simulate", "--seed", "1", "--contention")
	if again.stdout != r.stdout {
		t.Error("the same seed gave a different table")
	}
}

func TestSimulateShowsTheHerd(t *testing.T) {
	r := runCmd(t, "simulate", "--clients", "200", "--outage", "5s", "--capacity", "20")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// no-jitter's retries come as one wave of every client; jitter spreads them.
	var noJitter, documented []string
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "no-jitter":
			noJitter = f
		case "documented":
			documented = f
		}
	}
	if noJitter == nil || documented == nil {
		t.Fatalf("table lacks rows:\n%s", r.stdout)
	}
	if noJitter[3] != "200" {
		t.Errorf("no-jitter retry peak %s, want all 200 clients at once", noJitter[3])
	}
	if documented[3] == "200" {
		t.Errorf("documented retry peak %s: jitter did not spread the retries", documented[3])
	}
}

func TestSimulatePlot(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"herd.svg", "herd.PNG"} {
		path := filepath.Join(dir, name)
		r := runCmd(t, "simulate", "--clients", "100", "--plot", path)
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Size() == 0 {
			t.Fatalf("plot %s not written: %v", path, err)
		}
		if !strings.Contains(r.stdout, "wrote "+path) {
			t.Errorf("no word of the plot in:\n%s", r.stdout)
		}
	}
}

// TestSimulateContentionSeeds: --seeds summarises the contention runs per
// strategy; the Updater's default schedule meets issue 14's goal at 200
// clients over these seeds.
func TestSimulateContentionSeeds(t *testing.T) {
	r := runCmd(t, "simulate", "--contention", "--clients", "200", "--outage", "0s", "--seeds", "5")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "Over 5 seeds (1..5), 200 clients") {
		t.Fatalf("no summary in:\n%s", r.stdout)
	}
	lines := strings.Split(r.stdout[strings.Index(r.stdout, "Over 5 seeds"):], "\n")
	var row []string
	for _, l := range lines {
		if strings.HasPrefix(l, "spread (default)") {
			row = strings.Fields(strings.TrimPrefix(l, "spread (default)"))
		}
	}
	if len(row) != 5 {
		t.Fatalf("no spread row in:\n%s", r.stdout)
	}
	if row[2] != "0" {
		t.Errorf("spread: %s gave up on a seed, want 0:\n%s", row[2], r.stdout)
	}
	if bad := runCmd(t, "simulate", "--contention", "--seeds", "0"); bad.code == exitOK || !strings.Contains(bad.stderr, "--seeds 0") {
		t.Errorf("--seeds 0: exit %d, %s", bad.code, bad.stderr)
	}
}

// TestConflictReplay: the spread strategy's waits are those of the
// library's Transact: the documented SpreadConflicts schedule, capped at
// maximum_backoff, whatever order the calls come in.
func TestConflictReplay(t *testing.T) {
	x, err := newConflictReplay(20 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n     int
		since time.Duration
		r     float64
		want  time.Duration
	}{
		{0, 0, 0, 80 * time.Millisecond},                   // the first rerun's shortest wait
		{0, 5 * time.Second, 0.5, 1200 * time.Millisecond}, // its median, sqrt(80ms * 18s), whatever since
		{1, 7 * time.Second, 0, 20 * time.Second},          // full jitter over 27s - 7s
		{3, 17 * time.Second, 0.5, 5 * time.Second},        // half of 27s - 17s
		{2, time.Hour, 0, time.Second},                     // at least 1 s
		{1, 0, 0, 20 * time.Second},                        // 27 s, capped at maximum_backoff
	} {
		if got := x.after(tc.n, tc.since, tc.r); got != tc.want {
			t.Errorf("after(%d, %v, %v) = %v, want %v", tc.n, tc.since, tc.r, got, tc.want)
		}
	}
}
