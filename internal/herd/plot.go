package herd

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot size: a 2:1 slide.
const (
	plotWidth  = 10 * vg.Inch
	plotHeight = 5 * vg.Inch
)

// palette is Okabe and Ito's colour-blind-safe palette without its yellow,
// which is unreadable on white.
var palette = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xb2, A: 0xff}, // blue
	color.RGBA{R: 0x00, G: 0x9e, B: 0x73, A: 0xff}, // bluish green
	color.RGBA{R: 0xcc, G: 0x79, B: 0xa7, A: 0xff}, // reddish purple
	color.RGBA{R: 0xd5, G: 0x5e, B: 0x00, A: 0xff}, // vermillion
	color.RGBA{R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // orange
	color.RGBA{R: 0x56, G: 0xb4, B: 0xe9, A: 0xff}, // sky blue
	color.Black,
}

// Plot draws calls per 100 ms over time, one line per result in a distinct
// colour, to the file at path, replacing it. The format follows the
// extension: ".png" or ".svg" (any case); any other extension is an error and
// no file is written. The image is 10 x 5 inches with a title, axis labels in
// seconds and calls, and a legend beside the data, never over it; when all
// results share one scenario the title states it, the outage is shaded and
// the server's capacity is drawn as a dashed line. It returns an error if
// results is empty or has more strategies than it has colours (7).
func Plot(path string, results []Result) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("herd: cannot plot to %q: unknown extension %q, want .png or .svg", path, ext)
	}
	p, legend, err := newPlot(results)
	if err != nil {
		return err
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, ext[1:])
	if err != nil {
		return fmt.Errorf("herd: rendering plot: %w", err)
	}
	drawWithLegend(draw.New(c), p, legend)
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("herd: rendering plot: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("herd: writing plot: %w", err)
	}
	return nil
}

// drawWithLegend draws p on the left of dc and legend in a column on the
// right, its top level with the top of p's data area.
func drawWithLegend(dc draw.Canvas, p *plot.Plot, legend plot.Legend) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	margin := vg.Points(10)
	width := legend.Rectangle(dc).Size().X + 2*margin
	p.Draw(draw.Crop(dc, 0, -width, 0, 0))
	title := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	legend.Draw(draw.Crop(dc, dc.Size().X-width+margin, -margin, 0, -title))
}

// newPlot builds the plot that Plot renders, and its legend, which Plot
// draws beside it.
func newPlot(results []Result) (*plot.Plot, plot.Legend, error) {
	legend := plot.NewLegend()
	if len(results) == 0 {
		return nil, legend, errors.New("herd: Plot needs at least one result")
	}
	if len(results) > len(palette) {
		return nil, legend, fmt.Errorf("herd: Plot takes at most %d results, got %d", len(palette), len(results))
	}

	p := plot.New()
	p.Title.Text = "Calls per 100 ms"
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "calls per 100 ms"
	p.Title.TextStyle.Font.Size = vg.Points(18)
	p.Title.Padding = vg.Points(10)
	p.X.Label.TextStyle.Font.Size = vg.Points(14)
	p.Y.Label.TextStyle.Font.Size = vg.Points(14)
	p.X.Tick.Label.Font.Size = vg.Points(12)
	p.Y.Tick.Label.Font.Size = vg.Points(12)
	legend.TextStyle.Font.Size = vg.Points(14)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = vg.Points(28)
	legend.Padding = vg.Points(4)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xdd}
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)

	ticks, peak := 0, 0
	for _, r := range results {
		ticks = max(ticks, len(r.Series))
		peak = max(peak, r.Peak)
	}
	step := timeStep(float64(ticks) * Tick.Seconds())
	xmax := step * math.Ceil(float64(ticks)*Tick.Seconds()/step)
	ymax := float64(max(peak, 1)) * 1.05
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 0, ymax
	p.X.Tick.Marker = ticksEvery(step)
	p.Y.Tick.Marker = ticksEvery(countStep(ymax))

	cfg := results[0].Config
	shared := true
	for _, r := range results[1:] {
		shared = shared && r.Config == cfg
	}
	if shared {
		p.Title.Text = fmt.Sprintf("%d clients, %s outage, capacity %s per 100 ms",
			cfg.Clients, secsShort(cfg.Outage.Seconds()), capacityText(cfg.Capacity))
		if cfg.Deadline > 0 {
			p.Title.Text += ", " + secsShort(cfg.Deadline.Seconds()) + " deadline"
		}
		if cfg.Outage > 0 {
			o := cfg.Outage.Seconds()
			down, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: o, Y: 0}, {X: o, Y: ymax}, {X: 0, Y: ymax}})
			if err != nil {
				return nil, legend, fmt.Errorf("herd: plotting outage: %w", err)
			}
			down.Color = color.Gray{Y: 0xec}
			down.LineStyle.Width = 0
			p.Add(down)
			legend.Add("server down", down)
		}
		if cfg.Capacity > 0 {
			c := float64(cfg.Capacity)
			capLine, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c}, {X: xmax, Y: c}})
			if err != nil {
				return nil, legend, fmt.Errorf("herd: plotting capacity: %w", err)
			}
			capLine.Color = color.Gray{Y: 0x30}
			capLine.Width = vg.Points(1.5)
			capLine.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
			p.Add(capLine)
			legend.Add("capacity", capLine)
		}
	}

	for i, r := range results {
		xys := make(plotter.XYs, len(r.Series))
		for t, n := range r.Series {
			xys[t] = plotter.XY{X: float64(t) * Tick.Seconds(), Y: float64(n)}
		}
		if len(xys) == 0 { // no calls at all; NewLine refuses an empty line
			xys = plotter.XYs{{}}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, legend, fmt.Errorf("herd: plotting %q: %w", r.Strategy, err)
		}
		l.Color = palette[i]
		l.Width = vg.Points(1.8)
		p.Add(l)
		legend.Add(r.Strategy, l)
	}
	return p, legend, nil
}

// timeStep picks the spacing of time ticks: a round number of seconds giving
// at most 10 ticks over [0, span].
func timeStep(span float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600} {
		if span/s <= 10 {
			return s
		}
	}
	return 3600 * math.Ceil(span/36000)
}

// countStep picks the spacing of count ticks: 1, 2, 2.5 or 5 times a power
// of ten, giving at most 6 intervals over [0, span].
func countStep(span float64) float64 {
	for p := 1.0; ; p *= 10 {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if span/(m*p) <= 6 {
				return m * p
			}
		}
	}
}

// ticksEvery returns a ticker that labels 0, step, 2*step, ... up to the
// axis maximum.
func ticksEvery(step float64) plot.Ticker {
	return plot.TickerFunc(func(_, hi float64) []plot.Tick {
		var ts []plot.Tick
		for i := 0; float64(i)*step <= hi*(1+1e-9); i++ {
			v := float64(i) * step
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
		return ts
	})
}

// secsShort formats seconds without a trailing ".0": "30 s", "2.5 s".
func secsShort(s float64) string {
	return strings.TrimSuffix(strconv.FormatFloat(s, 'f', 1, 64), ".0") + " s"
}

func capacityText(c int) string {
	if c == 0 {
		return "unlimited"
	}
	return strconv.Itoa(c)
}
