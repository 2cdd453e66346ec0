package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
