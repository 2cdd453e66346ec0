package herd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func results(t testing.TB, cfg Config) []Result {
	t.Helper()
	var rs []Result
	for _, s := range strategies {
		rs = append(rs, mustSimulate(t, cfg, s))
	}
	return rs
}

// small is a scenario with the talk's shape that renders quickly.
var small = Config{Clients: 100, Outage: 5 * time.Second, Capacity: 10, Deadline: 30 * time.Second, Seed: 1}

func TestPlot(t *testing.T) {
	t.Parallel()
	rs := results(t, small)
	dir := t.TempDir()
	for name, magic := range map[string]string{"herd.png": "\x89PNG\r\n\x1a\n", "herd.SVG": "<?xml"} {
		path := filepath.Join(dir, name)
		if err := Plot(path, rs); err != nil {
			t.Fatalf("Plot(%s): %v", name, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 || !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s: %d bytes starting %q; want a real image", name, len(b), b[:min(len(b), 8)])
		}
		if strings.HasSuffix(name, "SVG") {
			for _, s := range strategies {
				if !bytes.Contains(b, []byte(s.Name)) {
					t.Errorf("%s: legend lacks %q", name, s.Name)
				}
			}
		}
	}
}

func TestPlotErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rs := results(t, small)[:1]
	for _, name := range []string{"herd.gif", "herd", "herd.pdf"} {
		path := filepath.Join(dir, name)
		err := Plot(path, rs)
		if err == nil || !strings.Contains(err.Error(), "want .png or .svg") {
			t.Errorf("Plot(%s) = %v, want an unknown-extension error", name, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("Plot(%s) left a file behind", name)
		}
	}
	if err := Plot(filepath.Join(dir, "empty.png"), nil); err == nil {
		t.Error("Plot with no results succeeded")
	}
	if err := Plot(filepath.Join(dir, "no", "such", "dir.svg"), rs); err == nil {
		t.Error("Plot into a missing directory succeeded")
	}
	// Results with no calls at all still plot.
	if err := Plot(filepath.Join(dir, "zero.svg"), []Result{{Strategy: "idle"}}); err != nil {
		t.Errorf("Plot of an empty result: %v", err)
	}
}

// TestRenderTalkPlot renders the talk's plot and table when HERD_PLOT names
// the output file, e.g.
//
//	HERD_PLOT=/tmp/herd.png go test -run TalkPlot -v ./internal/herd/
func TestRenderTalkPlot(t *testing.T) {
	path := os.Getenv("HERD_PLOT")
	if path == "" {
		t.Skip("set HERD_PLOT to a .png or .svg path to render the talk's plot")
	}
	rs := results(t, talk)
	if err := Plot(path, rs); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Table(&b, rs); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v\n%s", talk, b.String())
}
