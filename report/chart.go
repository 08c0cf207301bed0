package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"simkron/report/shape"
)

// Chart names one of the charts of a result: a built-in one drawn from
// its breakdowns or splits, or one the workload defined (such as ttcp's
// "progress").
type Chart string

const (
	// ChartLayers is stacked bars of the cycles per message of each
	// layer, a bar per message size, one chart per protocol and
	// direction.
	ChartLayers Chart = "layers"
	// ChartLatency is the mean latency against message size (log scale),
	// a line per protocol and direction.
	ChartLatency Chart = "latency"
	// ChartSplits is a pie chart of each cost split.
	ChartSplits Chart = "splits"
)

// Charts lists the built-in charts, the default first.
var Charts = []Chart{ChartLayers, ChartLatency, ChartSplits}

// ChartNames returns the charts r has data for: the built-in ones it can
// draw, then the workload's own, in order.
func ChartNames(r *Result) []Chart {
	var out []Chart
	if len(breakdowns(r)) > 0 {
		out = append(out, ChartLayers, ChartLatency)
	}
	if len(r.Figures.Splits) > 0 {
		out = append(out, ChartSplits)
	}
	for _, c := range r.Figures.Charts {
		out = append(out, Chart(c.Name))
	}
	for _, c := range r.Figures.Bars {
		out = append(out, Chart(c.Name))
	}
	return out
}

// ChartSize is the size of a rendered chart in pixels at 96 dots per
// inch (an SVG's size is the same in points, scaled by 3/4). A zero field
// takes its default: 1200 pixels wide, 450 pixels high per row of charts.
type ChartSize struct {
	Width, Height int
}

// chartDPI is the resolution of PNG charts.
const chartDPI = 96

const (
	defaultChartWidth  = 1200
	defaultChartHeight = 450 // per row of the grid
)

// ErrNoChartData is returned when a result has nothing to chart.
var ErrNoChartData = fmt.Errorf("the result has no measurements for this chart")

// layerColors gives each known layer a fixed colour, the same in every
// chart; other layers take plotutil's colours by position.
var layerColors = map[string]color.RGBA{
	"APPL":  {0x4e, 0x79, 0xa7, 0xff},
	"PRES":  {0x49, 0x98, 0x94, 0xff},
	"SES":   {0xb6, 0x99, 0x2d, 0xff},
	"TRANS": {0x9c, 0x75, 0x5f, 0xff},
	"TP4":   {0x86, 0xbc, 0xb6, 0xff},
	"TCP":   {0xd3, 0x72, 0x95, 0xff},
	"UDP":   {0xf2, 0x8e, 0x2b, 0xff},
	"CLNS":  {0x8c, 0xd1, 0x7d, 0xff},
	"IP":    {0xe1, 0x57, 0x59, 0xff},
	"LLC":   {0xff, 0x9d, 0xa7, 0xff},
	"MAC":   {0xb0, 0x7a, 0xa1, 0xff},
	"DEV":   {0x76, 0xb7, 0xb2, 0xff},
	"DMA":   {0x59, 0xa1, 0x4f, 0xff},
	"KERN":  {0xed, 0xc9, 0x48, 0xff},
	"IDLE":  {0xba, 0xb0, 0xac, 0xff},
}

func layerColor(layer string, i int) color.Color { return fixedColor(layerColors, layer, i) }

// fixedColor returns name's colour in m, or plotutil's i-th colour.
func fixedColor(m map[string]color.RGBA, name string, i int) color.Color {
	if c, ok := m[name]; ok {
		return c
	}
	return plotutil.Color(i)
}

// chartGrid returns the plots of chart c laid out in rows and columns;
// a nil plot leaves its cell empty.
func chartGrid(r *Result, c Chart, size ChartSize) ([][]*plot.Plot, error) {
	for _, ch := range r.Figures.Charts {
		if Chart(ch.Name) == c {
			var row []*plot.Plot
			for _, p := range ch.Plots {
				pl, err := linePlot(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", c, err)
				}
				row = append(row, pl)
			}
			return [][]*plot.Plot{row}, nil
		}
	}
	for _, ch := range r.Figures.Bars {
		if Chart(ch.Name) == c {
			w, _ := size.dims(1)
			var row []*plot.Plot
			for _, p := range ch.Plots {
				pl, err := barsPlot(p, w/vg.Length(max(len(ch.Plots), 1)))
				if err != nil {
					return nil, fmt.Errorf("%s: %w", c, err)
				}
				row = append(row, pl)
			}
			return [][]*plot.Plot{row}, nil
		}
	}
	switch c {
	case ChartLayers, ChartLatency:
		bs := breakdowns(r)
		if len(bs) == 0 {
			return nil, fmt.Errorf("%w: %s needs per-layer measurements (workload %q)", ErrNoChartData, c, r.Workload)
		}
		if c == ChartLatency {
			p, err := latencyPlot(bs)
			if err != nil {
				return nil, err
			}
			return [][]*plot.Plot{{p}}, nil
		}
		var grid [][]*plot.Plot
		var protocols []string
		for _, b := range bs {
			if len(protocols) == 0 || protocols[len(protocols)-1] != b.Protocol {
				protocols = append(protocols, b.Protocol)
				grid = append(grid, make([]*plot.Plot, 2))
			}
			col := 0
			if b.Direction == shape.Receive {
				col = 1
			}
			w, _ := size.dims(1)
			p, err := layersPlot(b, w/2)
			if err != nil {
				return nil, err
			}
			grid[len(grid)-1][col] = p
		}
		return grid, nil
	case ChartSplits:
		if len(r.Figures.Splits) == 0 {
			return nil, fmt.Errorf("%w: %s needs cost splits (workload %q)", ErrNoChartData, c, r.Workload)
		}
		var grid [][]*plot.Plot
		for i, sp := range r.Figures.Splits {
			if i%2 == 0 {
				grid = append(grid, nil)
			}
			grid[len(grid)-1] = append(grid[len(grid)-1], piePlot(sp))
		}
		return grid, nil
	}
	return nil, fmt.Errorf("unknown chart %q (this result has: %s)", c, chartList(ChartNames(r)))
}

// chartList writes chart names for messages.
func chartList(cs []Chart) string {
	if len(cs) == 0 {
		return "none"
	}
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return strings.Join(out, ", ")
}

// layersPlot draws b as bars of cycles stacked by layer, a bar per
// message size; panel is the width of the plot's cell.
func layersPlot(b shape.Breakdown, panel vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s %s: mean cycles per %s by layer", b.Protocol, b.Direction, b.Unit)
	p.X.Label.Text = b.SizeName + " (bytes)"
	p.Y.Label.Text = "cycles per " + b.Unit
	p.Y.Tick.Marker = cycleTicks{}
	p.Add(plotter.NewGrid())
	names := make([]string, len(b.Points))
	var top float64
	for i, pt := range b.Points {
		names[i] = strconv.Itoa(pt.Size)
		var t float64
		for _, l := range pt.Layers {
			t += l.Cycles
		}
		top = math.Max(top, t)
	}
	width := min(vg.Points(28), panel*0.55/vg.Length(max(len(b.Points), 1)))
	layers := b.LayerNames()
	bars := make([]*plotter.BarChart, len(layers))
	for i, l := range layers {
		vals := make(plotter.Values, len(b.Points))
		for j, pt := range b.Points {
			vals[j] = pt.Cycles(l)
		}
		bar, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", b.Protocol, b.Direction, l, err)
		}
		bar.Color = layerColor(l, i)
		bar.LineStyle.Width = 0
		if i > 0 {
			bar.StackOn(bars[i-1])
		}
		bars[i] = bar
		p.Add(bar)
	}
	// The legend lists the layers as they are stacked, top first, in room
	// left above the tallest bar.
	for i := len(layers) - 1; i >= 0; i-- {
		p.Legend.Add(layers[i], bars[i])
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.NominalX(names...)
	p.Y.Min = 0
	p.Y.Max = math.Max(top, 1) * (1 + 0.07*float64(len(layers)))
	return p, nil
}

// barsPlot draws one panel of grouped, stacked bars; panel is the width of
// the plot's cell. Parts of one label have one colour in every group (a
// layer's); the legend lists each label once.
func barsPlot(bp shape.BarPlot, panel vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = bp.Title
	p.X.Label.Text = bp.XLabel
	p.Y.Label.Text = bp.YLabel
	p.Y.Tick.Marker = cycleTicks{}
	p.Add(plotter.NewGrid())
	ng := max(len(bp.Groups), 1)
	width := min(vg.Points(16), panel*0.7/vg.Length(max(len(bp.Categories), 1)*ng))
	var top float64
	seen := map[string]bool{}
	var legend []string
	byLabel := map[string]*plotter.BarChart{}
	for gi, g := range bp.Groups {
		var below *plotter.BarChart
		totals := make([]float64, len(bp.Categories))
		for si, part := range g.Parts {
			vals := make(plotter.Values, len(bp.Categories))
			for k := range vals {
				if k < len(part.Values) {
					vals[k] = part.Values[k]
					totals[k] += part.Values[k]
				}
			}
			bar, err := plotter.NewBarChart(vals, width)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", g.Label, part.Label, err)
			}
			bar.Color = layerColor(part.Label, si)
			bar.LineStyle.Width = 0
			bar.Offset = (vg.Length(gi) - vg.Length(ng-1)/2) * width * 1.15
			if below != nil {
				bar.StackOn(below)
			}
			below = bar
			p.Add(bar)
			if !seen[part.Label] {
				seen[part.Label] = true
				legend = append(legend, part.Label)
				byLabel[part.Label] = bar
			}
		}
		for _, t := range totals {
			top = math.Max(top, t)
		}
	}
	shape.SortLayers(legend)
	for i := len(legend) - 1; i >= 0; i-- {
		p.Legend.Add(legend[i], byLabel[legend[i]])
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.NominalX(bp.Categories...)
	p.Y.Min = 0
	p.Y.Max = math.Max(top, 1) * (1 + 0.07*float64(len(legend)))
	return p, nil
}

// latencyPlot draws the mean latency of each breakdown against message
// size on a log scale (see logXAxis for sizes it cannot place).
func latencyPlot(bs []shape.Breakdown) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Mean latency against message size"
	p.X.Label.Text = "message size (bytes, log scale)"
	p.Y.Label.Text = "mean cycles"
	p.Y.Tick.Marker = cycleTicks{}
	p.Add(plotter.NewGrid())
	lines := make([]plotter.XYs, len(bs))
	for i, b := range bs {
		for _, pt := range b.Points {
			lines[i] = append(lines[i], plotter.XY{X: float64(pt.Size), Y: pt.Total()})
		}
	}
	ax := logXAxis(p, lines, "message size (bytes, log scale)", "message size (bytes)")
	for i, b := range bs {
		xys := ax.keep(lines[i])
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Label(), err)
		}
		c := plotutil.Color(i)
		line.Color = c
		line.Width = vg.Points(1.5)
		if b.Direction == shape.Receive {
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		}
		points.Color = c
		points.Shape = plotutil.Shape(i)
		points.Radius = vg.Points(3)
		p.Add(line, points)
		p.Legend.Add(b.Label(), line, points)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.Y.Min = math.Min(p.Y.Min, 0)
	p.Y.Max *= 1.1
	ax.bound(p, nil, nil)
	return p, nil
}

// logX is what a plot asked to draw x on a log scale does with points a
// log scale cannot place (x of 0 or below), which a result read from a
// file may hold. A reader of a size axis wants the sizes that can be
// drawn drawn, and to be told of the others: such points are left out,
// and the plot's title says how many. When no point can be placed the
// axis falls back to a linear scale, which draws every point, and the
// title says so. Points with a coordinate that is not finite are left
// out on any axis, and counted likewise.
type logX struct {
	log     bool // the axis is drawn on a log scale
	dropped int  // points left out
}

// logXAxis decides how plot p draws x for lines, wanted on a log scale:
// it sets the axis' scale, ticks and label (logLabel or linLabel) and
// notes in the title what it leaves out.
func logXAxis(p *plot.Plot, lines []plotter.XYs, logLabel, linLabel string) logX {
	ax := logX{}
	var positive, finite int
	for _, l := range lines {
		for _, pt := range l {
			if finiteXY(pt) {
				finite++
				if pt.X > 0 {
					positive++
				}
			}
		}
	}
	ax.log = positive > 0 || finite == 0
	for _, l := range lines {
		ax.dropped += len(l) - len(ax.keep(l))
	}
	if ax.log {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = sizeTicks{}
		p.X.Label.Text = logLabel
	} else {
		p.X.Label.Text = linLabel
		p.Title.Text += "\n(linear scale: no x above 0 to draw on a log scale)"
	}
	if ax.dropped > 0 {
		p.Title.Text += fmt.Sprintf("\n(%d %s left out: x of 0 or below on a log scale, or a value not finite)",
			ax.dropped, plural(ax.dropped, "point", "points"))
	}
	return ax
}

// keep returns the points of l the axis can draw.
func (ax logX) keep(l plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, len(l))
	for _, pt := range l {
		if finiteXY(pt) && (!ax.log || pt.X > 0) {
			out = append(out, pt)
		}
	}
	return out
}

// bound applies the plot's x bounds, those it was given (nil: from the
// data) when the scale can take them, and on a log scale keeps the range
// above 0 and not empty, which a log scale needs: a single size is drawn
// an octave either side. It runs after every line is added.
func (ax logX) bound(p *plot.Plot, lo, hi *float64) {
	if lo != nil && (!ax.log || *lo > 0) {
		p.X.Min = *lo
	}
	if hi != nil && (!ax.log || *hi > 0) {
		p.X.Max = *hi
	}
	if !ax.log {
		return
	}
	if math.IsInf(p.X.Min, 1) || math.IsInf(p.X.Max, -1) {
		// No point at all: an empty plot over a nominal range.
		p.X.Min, p.X.Max = 1, 1024
	}
	if p.X.Min > p.X.Max {
		p.X.Min, p.X.Max = p.X.Max, p.X.Min
	}
	if !(p.X.Min > 0) {
		p.X.Min = p.X.Max / 1024
	}
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
}

func finiteXY(pt plotter.XY) bool {
	return !math.IsInf(pt.X, 0) && !math.IsNaN(pt.X) && !math.IsInf(pt.Y, 0) && !math.IsNaN(pt.Y)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// linePlot draws one panel of a workload's chart: each line in the
// colour of its position, a line without points left out. An x axis on a
// log scale leaves out what it cannot draw and says so (see logX).
func linePlot(sp shape.Plot) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = sp.Title
	p.X.Label.Text = sp.XLabel
	p.Y.Label.Text = sp.YLabel
	p.Y.Tick.Marker = cycleTicks{}
	p.Add(plotter.NewGrid())
	lines := make([]plotter.XYs, len(sp.Lines))
	for i, l := range sp.Lines {
		for _, pt := range l.Points {
			lines[i] = append(lines[i], plotter.XY{X: pt.X, Y: pt.Y})
		}
	}
	ax := logX{}
	if sp.XLog {
		ax = logXAxis(p, lines, sp.XLabel, sp.XLabel)
	} else {
		for _, l := range lines {
			ax.dropped += len(l) - len(ax.keep(l))
		}
		if ax.dropped > 0 {
			p.Title.Text += fmt.Sprintf("\n(%d %s left out: a value not finite)", ax.dropped, plural(ax.dropped, "point", "points"))
		}
	}
	for i, l := range sp.Lines {
		xys := ax.keep(lines[i])
		if len(xys) == 0 {
			continue
		}
		c := plotutil.Color(i)
		if l.Marks {
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l.Label, err)
			}
			styleLine(line, l, c)
			points.Color = c
			points.Shape = plotutil.Shape(i)
			points.Radius = vg.Points(3)
			p.Add(line, points)
			p.Legend.Add(l.Label, line, points)
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.Label, err)
		}
		styleLine(line, l, c)
		p.Add(line)
		p.Legend.Add(l.Label, line)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	for _, b := range []struct {
		v   *float64
		dst *float64
	}{{sp.YMin, &p.Y.Min}, {sp.YMax, &p.Y.Max}} {
		if b.v != nil {
			*b.dst = *b.v
		}
	}
	ax.bound(p, sp.XMin, sp.XMax)
	return p, nil
}

func styleLine(line *plotter.Line, l shape.Line, c color.Color) {
	line.Color = c
	line.Width = vg.Points(1.5)
	if l.Step {
		line.StepStyle = plotter.PreStep
	}
	if l.Dashed {
		line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
}

// cycleTicks labels a cycle count axis compactly: 500, 20k, 1.5M.
type cycleTicks struct{}

func (cycleTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = compact(ts[i].Value)
		}
	}
	return ts
}

func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// sizeTicks marks a log-scaled byte axis at the powers of two, labelling
// the powers of four: 4, 16, 64, 256, 1K, 4K, 16K.
type sizeTicks struct{}

func (sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := 0; e < 40; e++ {
		v := math.Ldexp(1, e)
		if v < lo/1.0001 || v > hi*1.0001 {
			continue
		}
		t := plot.Tick{Value: v}
		if e%2 == 0 {
			t.Label = byteLabel(e)
		}
		ts = append(ts, t)
	}
	return ts
}

func byteLabel(e int) string {
	switch {
	case e >= 20:
		return strconv.Itoa(1<<(e-20)) + "M"
	case e >= 10:
		return strconv.Itoa(1<<(e-10)) + "K"
	}
	return strconv.Itoa(1 << e)
}

// dims returns the size in points of a grid of rows charts.
func (s ChartSize) dims(rows int) (w, h vg.Length) {
	pw, ph := s.Width, s.Height
	if pw <= 0 {
		pw = defaultChartWidth
	}
	if ph <= 0 {
		ph = defaultChartHeight * max(rows, 1)
	}
	return vg.Length(pw) * vg.Inch / chartDPI, vg.Length(ph) * vg.Inch / chartDPI
}

// drawGrid draws the grid of plots on canvas c.
func drawGrid(grid [][]*plot.Plot, c vg.CanvasSizer) {
	dc := draw.New(c)
	cols := 0
	for _, row := range grid {
		cols = max(cols, len(row))
	}
	for j := range grid {
		for len(grid[j]) < cols {
			grid[j] = append(grid[j], nil)
		}
	}
	tiles := draw.Tiles{
		Rows: len(grid), Cols: cols,
		PadX: vg.Points(24), PadY: vg.Points(24),
		PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(12),
	}
	cells := plot.Align(grid, tiles, dc)
	for j, row := range grid {
		for i, p := range row {
			if p != nil {
				p.Draw(cells[j][i])
			}
		}
	}
}

// WriteSVG writes chart c of r as an SVG image. The bytes depend on the
// result and the size alone.
func WriteSVG(w io.Writer, r *Result, c Chart, size ChartSize) error {
	grid, err := chartGrid(r, c, size)
	if err != nil {
		return err
	}
	cw, ch := size.dims(len(grid))
	canvas := vgsvg.New(cw, ch)
	drawGrid(grid, canvas)
	_, err = canvas.WriteTo(w)
	return err
}

// WritePNG writes chart c of r as a PNG image of size pixels.
func WritePNG(w io.Writer, r *Result, c Chart, size ChartSize) error {
	grid, err := chartGrid(r, c, size)
	if err != nil {
		return err
	}
	cw, ch := size.dims(len(grid))
	canvas := vgimg.NewWith(vgimg.UseWH(cw, ch), vgimg.UseDPI(chartDPI))
	drawGrid(grid, canvas)
	_, err = vgimg.PngCanvas{Canvas: canvas}.WriteTo(w)
	return err
}

// inlineSVG returns chart c as SVG markup to embed in HTML: the <svg>
// element without the XML declaration and comment before it.
func inlineSVG(r *Result, c Chart, size ChartSize) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteSVG(&b, r, c, size); err != nil {
		return nil, err
	}
	svg := b.Bytes()
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return bytes.TrimSpace(svg), nil
}
