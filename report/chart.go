package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
	// ChartLayers is bars of the mean cycles per message of each layer,
	// a bar per message size, a panel per protocol and direction, on
	// one y scale (logarithmic when the totals span decades).
	ChartLayers Chart = "layers"
	// ChartLatency is the mean latency against message size (log
	// scale), a panel per direction, a line per protocol.
	ChartLatency Chart = "latency"
	// ChartSplits is a pie chart of each cost split.
	ChartSplits Chart = "splits"
	// ChartWaterfall is a stretch of the run across the hosts
	// (Waterfall), drawn from a trace (Options.Waterfall), not from the
	// result.
	ChartWaterfall Chart = "waterfall"
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

// buildFigure lays out chart c of r for a canvas of size.
func buildFigure(r *Result, c Chart, size ChartSize) (*figure, error) {
	for _, ch := range r.Figures.Charts {
		if Chart(ch.Name) == c {
			f, err := lineFigure(ch, size)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c, err)
			}
			return f, nil
		}
	}
	for _, ch := range r.Figures.Bars {
		if Chart(ch.Name) == c {
			return barsFigure(ch, size)
		}
	}
	switch c {
	case ChartLayers:
		return layersFigure(r, size)
	case ChartLatency:
		return latencyFigure(r, size)
	case ChartSplits:
		return splitsFigure(r)
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

// lineY is how a group of panels draws y: linear or logarithmic between
// bounds all of them share.
type lineY struct {
	log    bool
	lo, hi float64
}

// sharedY returns the y axis of panels whose finite y values are ys and
// whose workload set bounds ymin, ymax (nil: from the data). The axis is
// logarithmic when no bound is set, every value is above 0 and they
// span more than two decades; a bound set keeps it linear.
func sharedY(ys []float64, ymin, ymax *float64) lineY {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		lo, hi = math.Min(lo, y), math.Max(hi, y)
	}
	if ymin == nil && ymax == nil && lo > 0 && hi/lo > 2*decade {
		// From the power of ten below when it is near, so that the
		// lowest values have a labelled tick under them.
		y := lineY{log: true, lo: lo / 1.25, hi: hi * 1.25}
		if p := math.Pow(10, math.Floor(math.Log10(lo))); p >= lo/4 {
			y.lo = math.Min(y.lo, p)
		}
		return y
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if ymin != nil {
		lo = *ymin
	}
	if ymax != nil {
		hi = *ymax
	} else {
		hi += (hi - lo) * 0.05
	}
	if lo == hi {
		hi = lo + 1
	}
	return lineY{lo: lo, hi: hi}
}

// apply sets p's y axis. A log axis is a linear axis of the values'
// logarithms (see logTicks), the lines' points transformed by ty.
func (y lineY) apply(p *plot.Plot) {
	if y.log {
		p.Y.Min, p.Y.Max = math.Log10(y.lo), math.Log10(y.hi)
		p.Y.Tick.Marker = logTicks{}
		return
	}
	p.Y.Min, p.Y.Max = y.lo, y.hi
	p.Y.Tick.Marker = cycleTicks{}
}

// ty returns xys with y as the axis draws it.
func (y lineY) ty(xys plotter.XYs) plotter.XYs {
	if !y.log {
		return xys
	}
	out := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		out[i] = plotter.XY{X: xy.X, Y: math.Log10(xy.Y)}
	}
	return out
}

// pendingLine is a line of a panel waiting for its figure's y axes.
type pendingLine struct {
	panel int
	xys   plotter.XYs
	e     entry
	step  bool
	label string
}

// latencyFigure draws the mean latency of each breakdown against message
// size on a log scale, a panel per direction, a line per protocol: the
// built-in "latency" chart (see logXAxis for sizes a log scale cannot
// place).
func latencyFigure(r *Result, size ChartSize) (*figure, error) {
	bs := breakdowns(r)
	if len(bs) == 0 {
		return nil, fmt.Errorf("%w: %s needs per-layer measurements (workload %q)", ErrNoChartData, ChartLatency, r.Workload)
	}
	var dirs, protocols []string
	for _, b := range bs {
		if !slices.Contains(dirs, b.Direction) {
			dirs = append(dirs, b.Direction)
		}
		if !slices.Contains(protocols, b.Protocol) {
			protocols = append(protocols, b.Protocol)
		}
	}
	slices.SortStableFunc(dirs, func(a, b string) int { return dirRank(a) - dirRank(b) })
	f := &figure{legendTitle: "protocol"}
	pal := newPalette()
	pal.reserve(protocols)
	for i, proto := range protocols {
		e := entry{label: proto, color: pal.color(proto), glyph: glyphs[i%len(glyphs)]}
		if pal.repeated(proto) {
			e.dashes = dashed
		}
		f.legend = append(f.legend, e)
	}
	width := plotWidth(size, len(dirs), f.legendWidth(1))
	var row []*plot.Plot
	var ys []float64
	var pending []pendingLine
	unit := bs[0].Unit
	for _, dir := range dirs {
		p := newPlot(dir, "message size (log scale)", "mean cycles per "+unit)
		var lines []plotter.XYs
		var of []shape.Breakdown
		for _, b := range bs {
			if b.Direction != dir {
				continue
			}
			var xys plotter.XYs
			for _, pt := range b.Points {
				xys = append(xys, plotter.XY{X: float64(pt.Size), Y: pt.Total()})
			}
			lines = append(lines, xys)
			of = append(of, b)
		}
		ax := logXAxis(p, lines, "message size (log scale)", "message size (bytes)", width)
		for i, b := range of {
			xys := ax.keep(lines[i])
			if len(xys) == 0 {
				continue
			}
			pending = append(pending, pendingLine{panel: len(row), xys: ax.tx(xys), e: f.legend[slices.Index(protocols, b.Protocol)], label: b.Label()})
			for _, xy := range xys {
				ys = append(ys, xy.Y)
			}
		}
		ax.bound(p, nil, nil, lines)
		row = append(row, p)
	}
	y := sharedY(ys, nil, nil)
	if !y.log {
		y.lo = math.Min(y.lo, 0)
	}
	for _, pl := range pending {
		if err := addLine(row[pl.panel], y.ty(pl.xys), pl.e, pl.step); err != nil {
			return nil, fmt.Errorf("%s: %w", pl.label, err)
		}
	}
	for _, p := range row {
		y.apply(p)
	}
	f.rows = [][]*plot.Plot{row}
	f.caption = fmt.Sprintf("Mean latency in cycles per %s against its size, a line per protocol, a panel per direction; the x axis is logarithmic", unit)
	if y.log {
		f.caption += ", and so is the y axis, shared by the panels."
	} else {
		f.caption += "; the panels share their y axis."
	}
	return f, nil
}

func dirRank(d string) int {
	switch d {
	case shape.Send:
		return 0
	case shape.Receive:
		return 1
	}
	return 2
}

// addLine adds line xys to p in e's style, with marks on its points if
// e has a glyph and marks is set or the line has few points.
func addLine(p *plot.Plot, xys plotter.XYs, e entry, step bool) error {
	line, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	line.Color = e.color
	line.Width = vg.Points(1.5)
	line.Dashes = e.dashes
	if step {
		line.StepStyle = plotter.PreStep
	}
	p.Add(line)
	if e.glyph != nil {
		pts, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		pts.Color = e.color
		pts.Shape = e.glyph
		pts.Radius = vg.Points(3)
		p.Add(pts)
	}
	return nil
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

// logXAxis decides how plot p draws x for lines, wanted on a log scale
// of byte sizes: it sets the axis' scale, ticks (for a data area about
// width wide) and label (logLabel or linLabel) and notes in the title
// what it leaves out.
func logXAxis(p *plot.Plot, lines []plotter.XYs, logLabel, linLabel string, width vg.Length) logX {
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
		// A linear axis of log2 of the size: gonum's log scale reserves
		// room for a centred axis label at the arithmetic mean of the
		// range, far off centre on a log scale.
		var sizes []float64
		for _, l := range lines {
			for _, pt := range ax.keep(l) {
				if v := math.Log2(pt.X); !slices.Contains(sizes, v) {
					sizes = append(sizes, v)
				}
			}
		}
		slices.Sort(sizes)
		p.X.Tick.Marker = sizeTicks{most: int(width / (textStyle(tickSize).Width("32 KiB") * 1.6)), sizes: sizes}
		p.X.Label.Text = logLabel
	} else {
		p.X.Tick.Marker = cycleTicks{}
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

// tx returns points the axis keeps as it draws them: x as log2 of the
// size on a log scale.
func (ax logX) tx(xys plotter.XYs) plotter.XYs {
	if !ax.log {
		return xys
	}
	out := make(plotter.XYs, len(xys))
	for i, xy := range xys {
		out[i] = plotter.XY{X: math.Log2(xy.X), Y: xy.Y}
	}
	return out
}

// bound sets the plot's x range: the bounds it was given (nil: from the
// points of lines the axis keeps) when the scale can take them, and on a
// log scale a range above 0 and not empty, which a log scale needs: a
// single size is drawn an octave either side, no size at all over 1 B
// to 1 KiB.
func (ax logX) bound(p *plot.Plot, lo, hi *float64, lines []plotter.XYs) {
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, pt := range ax.keep(l) {
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
		}
	}
	if lo != nil && (!ax.log || *lo > 0) {
		xmin = *lo
	}
	if hi != nil && (!ax.log || *hi > 0) {
		xmax = *hi
	}
	if math.IsInf(xmin, 1) || math.IsInf(xmax, -1) {
		// No point at all: an empty plot over a nominal range.
		xmin, xmax = 1, 1024
		if !ax.log {
			xmin = 0
		}
	}
	if xmin > xmax {
		xmin, xmax = xmax, xmin
	}
	if ax.log && !(xmin > 0) {
		xmin = xmax / 1024
	}
	if xmin == xmax {
		if ax.log {
			xmin, xmax = xmin/2, xmax*2
		} else {
			xmin, xmax = xmin-1, xmax+1
		}
	}
	if ax.log {
		xmin, xmax = math.Log2(xmin), math.Log2(xmax)
	}
	p.X.Min, p.X.Max = xmin, xmax
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

// lineFigure draws a workload's line chart: a panel per plot side by
// side, each line in its series' colour (see palette), one legend for
// all. A line without points is left out; an x axis on a log scale
// leaves out what it cannot draw and says so (see logX). Panels of one
// quantity (the same y label) over the same x range share their y axis,
// which is logarithmic when their values span more than two decades and
// the workload set no y bound.
func lineFigure(ch shape.Chart, size ChartSize) (*figure, error) {
	f := &figure{caption: ch.Caption}
	pal := newPalette()
	var names []string
	style := map[string]shape.Line{}
	for _, sp := range ch.Plots {
		for _, l := range sp.Lines {
			if !slices.Contains(names, l.Label) {
				names = append(names, l.Label)
				style[l.Label] = l
			}
		}
	}
	pal.reserve(names)
	f.legendTitle = legendTitle(names)
	marks := map[string]draw.GlyphDrawer{}
	for i, n := range names {
		l := style[n]
		e := entry{label: n, color: pal.color(n)}
		if l.Dashed || pal.repeated(n) {
			e.dashes = dashed
		}
		if l.Marks {
			e.glyph = glyphs[i%len(glyphs)]
			marks[n] = e.glyph
		}
		f.legend = append(f.legend, e)
	}
	width := plotWidth(size, len(ch.Plots), f.legendWidth(1))
	type group struct {
		ys     []float64
		panels []int
	}
	groups := map[string]*group{}
	var keys []string
	var row []*plot.Plot
	var pending []pendingLine
	for pi, sp := range ch.Plots {
		p := newPlot(sp.Title, sp.XLabel, sp.YLabel)
		lines := make([]plotter.XYs, len(sp.Lines))
		for i, l := range sp.Lines {
			for _, pt := range l.Points {
				lines[i] = append(lines[i], plotter.XY{X: pt.X, Y: pt.Y})
			}
		}
		ax := logX{}
		if sp.XLog {
			ax = logXAxis(p, lines, sp.XLabel, sp.XLabel, width)
		} else {
			for _, l := range lines {
				ax.dropped += len(l) - len(ax.keep(l))
			}
			if ax.dropped > 0 {
				p.Title.Text += fmt.Sprintf("\n(%d %s left out: a value not finite)", ax.dropped, plural(ax.dropped, "point", "points"))
			}
		}
		key := fmt.Sprintf("%s\x00%v\x00%s\x00%s\x00%s\x00%s", sp.YLabel, sp.XLog, bound(sp.XMin), bound(sp.XMax), bound(sp.YMin), bound(sp.YMax))
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			keys = append(keys, key)
		}
		g.panels = append(g.panels, pi)
		for i, l := range sp.Lines {
			xys := ax.keep(lines[i])
			if len(xys) == 0 {
				continue
			}
			pending = append(pending, pendingLine{panel: pi, xys: ax.tx(xys), e: f.legend[slices.Index(names, l.Label)], step: l.Step, label: l.Label})
			for _, xy := range xys {
				g.ys = append(g.ys, xy.Y)
			}
		}
		ax.bound(p, sp.XMin, sp.XMax, lines)
		row = append(row, p)
	}
	shared, logged := false, false
	ys := make([]lineY, len(row))
	for _, k := range keys {
		g := groups[k]
		sp := ch.Plots[g.panels[0]]
		y := sharedY(g.ys, sp.YMin, sp.YMax)
		for _, pi := range g.panels {
			ys[pi] = y
			y.apply(row[pi])
		}
		shared = shared || len(g.panels) > 1
		logged = logged || y.log
	}
	for _, pl := range pending {
		if err := addLine(row[pl.panel], ys[pl.panel].ty(pl.xys), pl.e, pl.step); err != nil {
			return nil, fmt.Errorf("%s: %w", pl.label, err)
		}
	}
	f.rows = [][]*plot.Plot{row}
	switch {
	case logged && shared:
		f.caption += " The y axis is logarithmic (the values span more than two decades), and panels of one quantity share it."
	case logged:
		f.caption += " The y axis is logarithmic: the values span more than two decades."
	case shared && len(keys) == 1:
		f.caption += " The panels share their y axis."
	case shared:
		f.caption += " Panels of one quantity over the same range share their y axis."
	}
	return f, nil
}

// legendTitle names what the series of a line chart are when they are
// all of one kind: protocols or cost categories.
func legendTitle(names []string) string {
	protocols, categories := true, true
	for _, n := range names {
		_, layer := shape.LayerNamed(n)
		_, proto := protocolLayer[n]
		_, cat := categoryColors[n]
		protocols = protocols && (layer || proto)
		categories = categories && cat
	}
	switch {
	case len(names) == 0:
		return ""
	case protocols:
		return "protocol"
	case categories:
		return "category"
	}
	return ""
}

// bound writes an optional bound for a key.
func bound(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// ChartSize is the size of a rendered chart in pixels at 96 dots per
// inch (an SVG's size is the same in points, scaled by 3/4). A zero field
// takes its default: 1200 pixels wide, and per row of panels 450 pixels
// high (300 for a row of bars cut into size ranges).
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

// dims returns the size in points of a grid of rows panels, each
// rowHeight pixels high (0: the default) unless the size says.
func (s ChartSize) dims(rows int, rowHeight ...int) (w, h vg.Length) {
	pw, ph := s.Width, s.Height
	if pw <= 0 {
		pw = defaultChartWidth
	}
	if ph <= 0 {
		rh := defaultChartHeight
		if len(rowHeight) > 0 && rowHeight[0] > 0 {
			rh = rowHeight[0]
		}
		ph = rh * max(rows, 1)
	}
	return vg.Length(pw) * vg.Inch / chartDPI, vg.Length(ph) * vg.Inch / chartDPI
}

// WriteSVG writes chart c of r as an SVG image. The bytes depend on the
// result and the size alone.
func WriteSVG(w io.Writer, r *Result, c Chart, size ChartSize) error {
	f, err := buildFigure(r, c, size)
	if err != nil {
		return err
	}
	return f.writeSVG(w, size)
}

func (f *figure) writeSVG(w io.Writer, size ChartSize) error {
	cw, ch := size.dims(len(f.rows), f.rowHeight)
	canvas := vgsvg.New(cw, ch)
	f.draw(canvas)
	_, err := canvas.WriteTo(w)
	return err
}

// WritePNG writes chart c of r as a PNG image of size pixels.
func WritePNG(w io.Writer, r *Result, c Chart, size ChartSize) error {
	f, err := buildFigure(r, c, size)
	if err != nil {
		return err
	}
	cw, ch := size.dims(len(f.rows), f.rowHeight)
	canvas := vgimg.NewWith(vgimg.UseWH(cw, ch), vgimg.UseDPI(chartDPI))
	f.draw(canvas)
	_, err = vgimg.PngCanvas{Canvas: canvas}.WriteTo(w)
	return err
}

// inlineSVG returns chart c as SVG markup to embed in HTML (the <svg>
// element without the XML declaration and comment before it) and its
// caption.
func inlineSVG(r *Result, c Chart, size ChartSize) (svg []byte, caption string, err error) {
	f, err := buildFigure(r, c, size)
	if err != nil {
		return nil, "", err
	}
	var b bytes.Buffer
	if err := f.writeSVG(&b, size); err != nil {
		return nil, "", err
	}
	svg = b.Bytes()
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	return bytes.TrimSpace(svg), f.caption, nil
}

// LegendEntry is one series of a chart as its legend shows it.
type LegendEntry struct {
	Label  string
	Color  string // "#RRGGBB"
	Dashed bool
}

// ChartLegend returns the series of chart c of r as WriteSVG draws them
// at size: one entry per series however many panels draw it (for a
// chart of pies, each category once). No two entries share a colour
// unless the chart has more series than the palette has colours.
func ChartLegend(r *Result, c Chart, size ChartSize) ([]LegendEntry, error) {
	f, err := buildFigure(r, c, size)
	if err != nil {
		return nil, err
	}
	var out []LegendEntry
	for _, e := range append(f.legend, f.listed...) {
		out = append(out, LegendEntry{Label: e.label, Color: hexColor(e.color), Dashed: len(e.dashes) > 0})
	}
	return out, nil
}
