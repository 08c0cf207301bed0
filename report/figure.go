package report

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"simkron/report/shape"
)

// figure is a chart laid out for drawing: panels in rows and columns,
// and one legend for all of them drawn to their right, where no data or
// gridline can run through it. A series has one entry in the legend
// however many panels draw it, in one style everywhere.
type figure struct {
	rows        [][]*plot.Plot // a nil panel leaves its cell empty
	legendTitle string
	legend      []entry
	// listed are series each panel lists itself (a pie's categories),
	// for ChartLegend.
	listed []entry
	// rowHeight is the height in pixels of a row of panels when the
	// size asked for none; 0 is defaultChartHeight.
	rowHeight int
	// caption says what the figure shows, for the HTML report.
	caption string
}

// entry is one series of a figure: its label and how it is drawn.
type entry struct {
	label  string
	color  color.Color
	fill   bool             // an area (bars, wedges): a square in the legend
	dashes []vg.Length      // a line's dashes; none: solid
	glyph  draw.GlyphDrawer // the mark on a line's points; nil: none
}

// Fonts: sans serif, as the HTML page around the charts.
var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

const (
	titleSize  = vg.Length(11)
	labelSize  = vg.Length(10)
	tickSize   = vg.Length(9)
	legendSize = vg.Length(10)
)

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(sansFont, size), Handler: plot.DefaultTextHandler}
}

// gridColor is the colour of the gridlines: light, behind the data.
var gridColor = color.Gray{Y: 0xdd}

// newPlot returns an empty panel with its title and axis labels in the
// figures' fonts and light gridlines (horizontal only for bars, whose
// ticks mark bars, not values).
func newPlot(title, xLabel, yLabel string, bars ...bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sansFont, titleSize)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, labelSize)
		a.Tick.Label.Font = font.From(sansFont, tickSize)
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridColor, gridColor
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.5), vg.Points(0.5)
	if len(bars) > 0 && bars[0] {
		g.Vertical.Color = nil
	}
	p.Add(g)
	return p
}

// Legend geometry.
const (
	legendSwatch = vg.Length(18) // width of an entry's sample
	legendGap    = vg.Length(5)  // between the sample and the label
	legendPad    = vg.Length(10) // around the legend
)

// legendEntryHeight is the height of one line of the legend.
func legendEntryHeight() vg.Length { return textStyle(legendSize).Height("Xg") * 1.3 }

// legendWidth returns the width of the legend laid out in cols columns.
func (f *figure) legendWidth(cols int) vg.Length {
	sty := textStyle(legendSize)
	var text vg.Length
	for _, e := range f.legend {
		text = max(text, sty.Width(e.label))
	}
	w := vg.Length(cols)*(legendSwatch+legendGap+text) + vg.Length(cols-1)*legendPad
	if f.legendTitle != "" {
		w = max(w, textStyle(legendSize).Width(f.legendTitle))
	}
	return w + 2*legendPad
}

// legendColumns returns how many columns the legend needs to fit in
// height h.
func (f *figure) legendColumns(h vg.Length) int {
	per := int((h - 2*legendPad) / legendEntryHeight())
	if f.legendTitle != "" {
		per--
	}
	per = max(per, 1)
	return max((len(f.legend)+per-1)/per, 1)
}

// drawLegend draws the legend in c from its top left corner.
func (f *figure) drawLegend(c draw.Canvas, cols int) {
	sty := textStyle(legendSize)
	eh := legendEntryHeight()
	x0, y := c.Min.X+legendPad, c.Max.Y-legendPad
	if f.legendTitle != "" {
		c.FillText(sty, vg.Point{X: x0, Y: y - eh*0.8}, f.legendTitle)
		y -= eh
	}
	per := (len(f.legend) + cols - 1) / cols
	var text vg.Length
	for _, e := range f.legend {
		text = max(text, sty.Width(e.label))
	}
	colW := legendSwatch + legendGap + text + legendPad
	for i, e := range f.legend {
		x := x0 + vg.Length(i/per)*colW
		top := y - vg.Length(i%per)*eh
		mid := top - eh/2
		if e.fill {
			h := eh * 0.6
			pts := []vg.Point{{X: x, Y: mid - h/2}, {X: x + legendSwatch, Y: mid - h/2},
				{X: x + legendSwatch, Y: mid + h/2}, {X: x, Y: mid + h/2}}
			c.FillPolygon(e.color, pts)
		} else {
			c.StrokeLine2(draw.LineStyle{Color: e.color, Width: vg.Points(1.5), Dashes: e.dashes}, x, mid, x+legendSwatch, mid)
			if e.glyph != nil {
				c.DrawGlyphNoClip(draw.GlyphStyle{Color: e.color, Radius: vg.Points(3), Shape: e.glyph}, vg.Point{X: x + legendSwatch/2, Y: mid})
			}
		}
		lsty := sty
		lsty.YAlign = draw.YCenter
		c.FillText(lsty, vg.Point{X: x + legendSwatch + legendGap, Y: mid}, e.label)
	}
}

// draw draws the figure on canvas cv: the panels aligned in a grid, the
// legend to their right.
func (f *figure) draw(cv vg.CanvasSizer) {
	dc := draw.New(cv)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	area := dc
	if len(f.legend) > 0 {
		cols := f.legendColumns(dc.Max.Y - dc.Min.Y)
		lw := f.legendWidth(cols)
		// The legend never takes more than a third of the width; its
		// labels may then run past the canvas, which the overlap test
		// of the charts would report.
		lw = min(lw, (dc.Max.X-dc.Min.X)/3)
		area = draw.Crop(dc, 0, -lw, 0, 0)
		leg := draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, -vg.Points(8))
		f.drawLegend(leg, cols)
	}
	cols := 0
	for _, row := range f.rows {
		cols = max(cols, len(row))
	}
	grid := make([][]*plot.Plot, len(f.rows))
	for j, row := range f.rows {
		grid[j] = append(append([]*plot.Plot(nil), row...), make([]*plot.Plot, cols-len(row))...)
	}
	tiles := draw.Tiles{
		Rows: len(grid), Cols: cols,
		PadX: vg.Points(24), PadY: vg.Points(24),
		PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(12),
	}
	cells := plot.Align(grid, tiles, area)
	for j, row := range grid {
		for i, p := range row {
			if p != nil {
				p.Draw(cells[j][i])
			}
		}
	}
}

// glyphs are the marks of lines' points, by the line's place in its
// figure, so that lines are told apart without their colours.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.RingGlyph{},
	draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// dashed is the dash pattern of a dashed line.
var dashed = []vg.Length{vg.Points(6), vg.Points(3)}

// cycleTicks labels a linear axis of counts compactly: 500, 20k, 1.5M.
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
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 4, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// logTicks marks an axis of log10 of its values (gonum's log scale
// reserves room for a centred axis label at the arithmetic mean of the
// range, far off centre, so a log axis here is a linear axis of the
// logarithms) at the powers of ten, labelled compactly (1k, 10k, 1M),
// with unlabelled marks at their multiples; when the range holds fewer
// than three powers of ten it labels 2 and 5 times them too.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := int(math.Floor(lo)), int(math.Ceil(hi))
	if e1-e0 > 60 {
		return nil
	}
	powers := 0
	for e := e0; e <= e1; e++ {
		if v := float64(e); v >= lo-1e-9 && v <= hi+1e-9 {
			powers++
		}
	}
	var ts []plot.Tick
	for e := e0; e <= e1; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(e) + math.Log10(float64(m))
			if v < lo-1e-9 || v > hi+1e-9 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (powers < 3 && (m == 2 || m == 5)) {
				t.Label = compact(float64(m) * math.Pow(10, float64(e)))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// sizeTicks marks an axis of log2 of byte sizes (see logTicks). When
// the sizes measured (in log2, ascending) are few and far enough apart
// for most labels across the axis, it labels each of them; otherwise it
// marks the powers of two and labels them in bytes and KiB (4 B, 64 B,
// 1 KiB, 32 KiB): every one when most fit, else every second, fourth...,
// always the largest.
type sizeTicks struct {
	most  int
	sizes []float64
}

func (t sizeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi >= lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	if n := len(t.sizes); n > 0 && n <= t.most {
		apart := true
		for i := 1; i < n; i++ {
			apart = apart && t.sizes[i]-t.sizes[i-1] >= (hi-lo)/float64(t.most)
		}
		if apart {
			var ts []plot.Tick
			for _, v := range t.sizes {
				if v >= lo-1e-9 && v <= hi+1e-9 {
					ts = append(ts, plot.Tick{Value: v, Label: sizeLabel(math.Exp2(v))})
				}
			}
			return ts
		}
	}
	var es []int
	for e := max(int(math.Ceil(lo-1e-9)), -60); e <= min(int(math.Floor(hi+1e-9)), 60); e++ {
		es = append(es, e)
	}
	stride := 1
	for t.most > 0 && (len(es)+stride-1)/stride > t.most {
		stride *= 2
	}
	var ts []plot.Tick
	for _, e := range es {
		tk := plot.Tick{Value: float64(e)}
		if (es[len(es)-1]-e)%stride == 0 {
			tk.Label = sizeLabel(math.Ldexp(1, e))
		}
		ts = append(ts, tk)
	}
	return ts
}

// sizeLabel writes a byte size on an axis: "4 B", "32 KiB".
func sizeLabel(v float64) string {
	if r := math.Round(v); math.Abs(v-r) < 1e-6*math.Max(1, v) && math.Abs(v) < 1<<52 {
		v = r
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<52 {
		return shape.SizeLabel(int(v))
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " B"
}

// nominalTicks labels categories at 0, 1, 2...: every one side by side
// when the labels fit in width, else every one on two staggered lines
// (the last on the first), else every k-th, always the last.
func nominalTicks(labels []string, width vg.Length) plot.TickerFunc {
	sty := textStyle(tickSize)
	var widest vg.Length
	for _, l := range labels {
		widest = max(widest, sty.Width(l))
	}
	n := len(labels)
	fits := func(per int) bool { return width <= 0 || width/vg.Length(max((n+per-1)/per, 1)) >= widest*1.2 }
	stride, stagger := 1, false
	if !fits(1) {
		if fits(2) {
			stagger = true
		} else {
			for stride < n && !fits(stride) {
				stride++
			}
		}
	}
	return func(lo, hi float64) []plot.Tick {
		var ts []plot.Tick
		for i, l := range labels {
			t := plot.Tick{Value: float64(i)}
			if (n-1-i)%stride == 0 {
				t.Label = l
				if stagger && (n-1-i)%2 == 1 {
					t.Label = "\n" + l
				}
			}
			ts = append(ts, t)
		}
		return ts
	}
}
