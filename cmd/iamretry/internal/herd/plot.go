package herd

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot size: a 10 x 7 inch slide, room for two stacked panels.
const (
	plotWidth  = 10 * vg.Inch
	plotHeight = 7 * vg.Inch
)

// Font sizes, readable on a projected slide.
const (
	titleSize  = 20
	panelSize  = 15
	labelSize  = 14
	tickSize   = 12
	legendSize = 14
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
// colour, to the file at path, replacing it (the layout: package doc,
// Plots). The format follows the extension: ".png" or ".svg" (any case);
// any other extension is an error and no file is written. It returns an
// error if results is empty or has more strategies than it has colours
// (7).
func Plot(path string, results []Result) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("herd: cannot plot to %q: unknown extension %q, want .png or .svg", path, ext)
	}
	f, err := newFigure(results)
	if err != nil {
		return err
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, ext[1:])
	if err != nil {
		return fmt.Errorf("herd: rendering plot: %w", err)
	}
	f.draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("herd: rendering plot: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("herd: writing plot: %w", err)
	}
	return nil
}

// figure is what Plot draws: a title over two panels, full range on top and
// zoomed below, and one legend for both.
type figure struct {
	title       text.Style
	titleText   string
	full, zoom  *plot.Plot
	legend      plot.Legend
	zoomTop     float64  // the zoom panel's y maximum
	zoomClipped []string // strategies whose retries the zoom panel clips
}

// draw lays f out on dc: the title across the top, the panels aligned with
// plot.Align below it on the left, and the legend on the right, its top
// level with the top of the upper panel's data area.
func (f *figure) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	margin := vg.Points(12)
	legendWidth := f.legend.Rectangle(dc).Size().X + 2*margin
	panels := draw.Crop(dc, 0, -legendWidth, 0, 0)

	titleHeight := f.title.Rectangle(f.titleText).Size().Y
	top := dc.Max.Y - margin
	panelsCentre := (panels.Min.X + panels.Max.X) / 2
	dc.FillText(f.title, vg.Point{X: panelsCentre, Y: top + f.title.FontExtents().Descent}, f.titleText)
	panels = draw.Crop(panels, 0, 0, 0, -(margin + titleHeight + vg.Points(6)))

	plots := [][]*plot.Plot{{f.full}, {f.zoom}}
	cs := plot.Align(plots, draw.Tiles{
		Rows: 2, Cols: 1,
		PadY:      vg.Points(10),
		PadLeft:   vg.Points(6),
		PadRight:  vg.Points(4),
		PadBottom: vg.Points(6),
	}, panels)
	f.full.Draw(cs[0][0])
	f.zoom.Draw(cs[1][0])

	dataTop := f.full.DataCanvas(cs[0][0]).Max.Y
	f.legend.Draw(draw.Crop(dc, dc.Size().X-legendWidth+margin, -margin, 0, dataTop-dc.Max.Y))
}

// newFigure builds the figure that Plot draws.
func newFigure(results []Result) (*figure, error) {
	if len(results) == 0 {
		return nil, errors.New("herd: Plot needs at least one result")
	}
	if len(results) > len(palette) {
		return nil, fmt.Errorf("herd: Plot takes at most %d results, got %d", len(palette), len(results))
	}

	f := &figure{titleText: "Calls per 100 ms", legend: plot.NewLegend()}
	f.title = plot.New().Title.TextStyle
	f.title.Font.Size = vg.Points(titleSize)
	f.title.XAlign = draw.XCenter
	f.legend.TextStyle.Font.Size = vg.Points(legendSize)
	f.legend.Top, f.legend.Left = true, true
	f.legend.ThumbnailWidth = vg.Points(30)
	f.legend.Padding = vg.Points(5)

	ticks, peak := 0, 0
	for _, r := range results {
		ticks = max(ticks, len(r.Series))
		peak = max(peak, r.Peak)
	}
	span := float64(ticks) * Tick.Seconds()
	step := timeStep(span)
	xmax := step * math.Ceil(span/step)

	cfg := results[0].Config
	shared := true
	for _, r := range results[1:] {
		shared = shared && r.Config == cfg
	}
	if shared {
		f.titleText = fmt.Sprintf("%d clients, %s outage, capacity %s per 100 ms",
			cfg.Clients, secsShort(cfg.Outage.Seconds()), capacityText(cfg.Capacity))
		if cfg.Deadline > 0 {
			f.titleText += ", " + secsShort(cfg.Deadline.Seconds()) + " deadline"
		}
	}

	// The zoom: about three times the capacity, or the highest retry peak
	// of the strategies that spread their retries out, whichever is higher.
	zoom := 0
	if shared {
		zoom = 3 * cfg.Capacity
	}
	for _, r := range results {
		if 2*r.RetryPeak < r.Config.Clients {
			zoom = max(zoom, r.RetryPeak)
		}
	}
	f.zoomTop = float64(niceCeil(max(zoom, 1)))
	burst := false // whether the zoom clips first calls, not only synchronized retries
	for _, r := range results {
		switch {
		case float64(r.RetryPeak) > f.zoomTop:
			f.zoomClipped = append(f.zoomClipped, r.Strategy)
		case float64(r.Peak) > f.zoomTop:
			burst = true
		}
	}

	fullTop := float64(max(peak, 1)) * 1.05
	f.full = newPanel("all strategies, full range", xmax, step, fullTop, false)
	zoomTitle := "zoom: 0\u2013" + strconv.FormatFloat(f.zoomTop, 'f', -1, 64) + " calls per 100 ms"
	clipped := slices.Clone(f.zoomClipped)
	if burst && shared && cfg.Start == 0 {
		clipped = append(clipped, "first calls at t = 0")
	} else if burst {
		clipped = append(clipped, "first calls")
	}
	if n := len(clipped); n > 0 {
		list := clipped[n-1]
		if n > 1 {
			list = strings.Join(clipped[:n-1], ", ") + " and " + list
		}
		zoomTitle += " (" + list + " clipped)"
	} else {
		zoomTitle += " (nothing clipped)"
	}
	f.zoom = newPanel(zoomTitle, xmax, step, f.zoomTop, true)

	if shared && cfg.Outage > 0 {
		o := cfg.Outage.Seconds()
		for i, p := range []*plot.Plot{f.full, f.zoom} {
			down, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: o, Y: 0}, {X: o, Y: p.Y.Max}, {X: 0, Y: p.Y.Max}})
			if err != nil {
				return nil, fmt.Errorf("herd: plotting outage: %w", err)
			}
			down.Color = color.Gray{Y: 0xe8}
			down.LineStyle.Width = 0
			p.Add(down)
			if i == 0 {
				f.legend.Add("server down", down)
			}
		}
	}
	if shared && cfg.Capacity > 0 {
		c := float64(cfg.Capacity)
		capLine, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c}, {X: xmax, Y: c}})
		if err != nil {
			return nil, fmt.Errorf("herd: plotting capacity: %w", err)
		}
		capLine.Color = color.Gray{Y: 0x30}
		capLine.Width = vg.Points(1.5)
		capLine.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		f.full.Add(capLine)
		f.zoom.Add(capLine)
		f.legend.Add("capacity", capLine)
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
			return nil, fmt.Errorf("herd: plotting %q: %w", r.Strategy, err)
		}
		l.Color = palette[i]
		l.Width = vg.Points(1.8)
		f.full.Add(l)
		f.zoom.Add(l)
		f.legend.Add(r.Strategy, l)
	}
	// Adding plotters widens the axes to their data; set the ranges last.
	f.full.X.Max, f.full.Y.Max = xmax, fullTop
	f.zoom.X.Max, f.zoom.Y.Max = xmax, f.zoomTop
	return f, nil
}

// newPanel returns a panel with a grid, x from 0 to xmax in seconds with
// ticks every step, and y from 0 to ymax in calls. Only the bottom panel
// labels the shared time axis; the other has unlabelled ticks.
func newPanel(title string, xmax, step, ymax float64, bottom bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(panelSize)
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = "calls per 100 ms"
	p.Y.Label.TextStyle.Font.Size = vg.Points(labelSize)
	p.Y.Tick.Label.Font.Size = vg.Points(tickSize)
	p.X.Tick.Label.Font.Size = vg.Points(tickSize)
	p.X.Label.TextStyle.Font.Size = vg.Points(labelSize)
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 0, ymax
	p.Y.Tick.Marker = ticksEvery(countStep(ymax), true)
	if bottom {
		p.X.Label.Text = "time (s)"
		p.X.Tick.Marker = ticksEvery(step, true)
	} else {
		// Unlabelled ticks are minor ticks, drawn half as long.
		p.X.Tick.Marker = ticksEvery(step, false)
		p.X.Tick.Length *= 2
	}
	p.Add(gridLines{color.Gray{Y: 0xdd}})
	return p
}

// gridLines draws a line across the data at every tick of both axes,
// labelled or not (plotter.Grid skips unlabelled ones).
type gridLines struct{ color color.Color }

func (g gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	sty := draw.LineStyle{Color: g.color, Width: vg.Points(0.5)}
	trX, trY := p.Transforms(&c)
	for _, t := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		if x := trX(t.Value); c.ContainsX(x) {
			c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
		}
	}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if y := trY(t.Value); c.ContainsY(y) {
			c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
		}
	}
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

// niceCeil rounds a count up to 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a
// power of ten (at least 1), which is a multiple of countStep's tick spacing
// for that range.
func niceCeil(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{10, 15, 20, 25, 30, 40, 50, 60, 80} {
			if c := m * p; c%10 == 0 && c/10 >= n {
				return c / 10
			}
		}
	}
}

// ticksEvery returns a ticker that marks 0, step, 2*step, ... up to the
// axis maximum, labelled if labels is true.
func ticksEvery(step float64, labels bool) plot.Ticker {
	return plot.TickerFunc(func(_, hi float64) []plot.Tick {
		var ts []plot.Tick
		for i := 0; float64(i)*step <= hi*(1+1e-9); i++ {
			v := float64(i) * step
			t := plot.Tick{Value: v}
			if labels {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, t)
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
