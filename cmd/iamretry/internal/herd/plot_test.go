package herd

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
			// One legend for both panels: each name is drawn once (the
			// clipped no-jitter line is also named in the zoom's title).
			for _, s := range strategies {
				if n := bytes.Count(b, []byte(">"+s.Name+"</text>")); n != 1 {
					t.Errorf("%s: legend entry %q drawn %d times, want once", name, s.Name, n)
				}
			}
			for _, s := range []string{">capacity</text>", ">server down</text>", "(no jitter and first calls at t = 0 clipped)"} {
				if n := bytes.Count(b, []byte(s)); n != 1 {
					t.Errorf("%s: %q drawn %d times, want once", name, s, n)
				}
			}
		}
	}
}

// TestPlotZoom checks the two panels: the top one holds every line, the
// bottom one zooms in on the jittered strategies and clips only the
// synchronized one.
func TestPlotZoom(t *testing.T) {
	t.Parallel()
	rs := results(t, small)
	f, err := newFigure(rs)
	if err != nil {
		t.Fatal(err)
	}
	peak := 0
	for _, r := range rs {
		peak = max(peak, r.Peak)
	}
	if f.full.Y.Min != 0 || f.full.Y.Max < float64(peak) {
		t.Errorf("full panel y range [%v, %v], want [0, >= peak %d]", f.full.Y.Min, f.full.Y.Max, peak)
	}
	if f.zoom.Y.Min != 0 || f.zoom.Y.Max != f.zoomTop || f.zoomTop < float64(3*small.Capacity) || f.zoomTop >= float64(peak)/2 {
		t.Errorf("zoom panel y range [%v, %v] (zoomTop %v), want [0, about 3 x capacity %d], well below peak %d",
			f.zoom.Y.Min, f.zoom.Y.Max, f.zoomTop, small.Capacity, peak)
	}
	if f.full.X.Min != f.zoom.X.Min || f.full.X.Max != f.zoom.X.Max {
		t.Errorf("panels' x ranges differ: [%v, %v] and [%v, %v]", f.full.X.Min, f.full.X.Max, f.zoom.X.Min, f.zoom.X.Max)
	}
	for _, r := range rs {
		if r.Strategy != none.Name && float64(r.RetryPeak) > f.zoomTop {
			t.Errorf("zoom to %v clips %s's retry peak %d", f.zoomTop, r.Strategy, r.RetryPeak)
		}
	}
	if !slices.Equal(f.zoomClipped, []string{none.Name}) {
		t.Errorf("zoom clips %q, want only %q", f.zoomClipped, none.Name)
	}
	want := fmt.Sprintf("zoom: 0–%v calls per 100 ms (no jitter and first calls at t = 0 clipped)", f.zoomTop)
	if f.zoom.Title.Text != want {
		t.Errorf("zoom title %q, want %q", f.zoom.Title.Text, want)
	}
	if f.full.X.Label.Text != "" || f.zoom.X.Label.Text != "time (s)" {
		t.Errorf("time axis labels %q (top) and %q (bottom), want it on the bottom panel only", f.full.X.Label.Text, f.zoom.X.Label.Text)
	}

	// Without a synchronized strategy nothing but the first calls clips.
	f, err = newFigure(rs[:3])
	if err != nil {
		t.Fatal(err)
	}
	if len(f.zoomClipped) != 0 || !strings.HasSuffix(f.zoom.Title.Text, "(first calls at t = 0 clipped)") {
		t.Errorf("jittered strategies only: zoom clips %q, title %q", f.zoomClipped, f.zoom.Title.Text)
	}
}

func TestNiceCeil(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want int }{
		{0, 1}, {1, 1}, {2, 2}, {7, 8}, {9, 10}, {11, 15}, {30, 30}, {31, 40}, {110, 150}, {150, 150}, {209, 250}, {300, 300}, {301, 400}, {801, 1000},
	} {
		got := niceCeil(c.in)
		if got != c.want {
			t.Errorf("niceCeil(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	// The zoom's ticks must end on its maximum.
	for n := range 100_000 {
		got := niceCeil(n)
		if step := countStep(float64(got)); got < n || math.Mod(float64(got), step) != 0 {
			t.Fatalf("niceCeil(%d) = %d: below it, or not a multiple of its tick step %v", n, got, step)
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
