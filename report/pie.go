package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"simkron/report/shape"
)

// splitsFigure draws each cost split as a pie, two to a row: the
// built-in "splits" chart. A category has one colour in every pie (the
// TOP study's categories their own, see palette).
func splitsFigure(r *Result) (*figure, error) {
	if len(r.Figures.Splits) == 0 {
		return nil, fmt.Errorf("%w: %s needs cost splits (workload %q)", ErrNoChartData, ChartSplits, r.Workload)
	}
	pal := newPalette()
	var names []string
	for _, sp := range r.Figures.Splits {
		for _, c := range sp.Categories {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	pal.reserve(names)
	f := &figure{caption: "Where the processing time goes: each cost split as a pie, clockwise from twelve o'clock in the order of its list, each category's share beside its name and, from 4%, on its wedge."}
	for _, n := range names {
		f.listed = append(f.listed, entry{label: n, color: pal.color(n), fill: true})
	}
	for i, sp := range r.Figures.Splits {
		if i%2 == 0 {
			f.rows = append(f.rows, nil)
		}
		f.rows[len(f.rows)-1] = append(f.rows[len(f.rows)-1], piePlot(sp, pal))
	}
	return f, nil
}

// piePlot draws split s as a pie: a wedge per category with a positive
// value, clockwise from twelve o'clock in the split's order, each with
// its share, and beside it the list of the categories with their shares.
func piePlot(s shape.Split, pal *palette) *plot.Plot {
	p := plot.New()
	p.Title.Text = s.Title
	p.Title.TextStyle.Font = font.From(sansFont, titleSize)
	p.HideAxes()
	p.Add(&pie{split: s, pal: pal})
	return p
}

// pie is a plotter of one split and its list of categories.
type pie struct {
	split shape.Split
	pal   *palette
}

var _ plot.Plotter = (*pie)(nil)

func (pc *pie) share(v float64) float64 {
	if t := pc.split.Total(); t > 0 {
		return 100 * v / t
	}
	return 0
}

// Plot draws the list of categories at the left of the canvas and the
// wedges in the room to its right.
func (pc *pie) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(legendSize)
	sty.YAlign = draw.YCenter
	eh := legendEntryHeight()
	var listW vg.Length
	for i, cat := range pc.split.Categories {
		label := fmt.Sprintf("%s (%.1f%%)", cat.Name, pc.share(cat.Value))
		listW = max(listW, sty.Width(label))
		y := c.Max.Y - eh*(vg.Length(i)+0.5)
		x := c.Min.X
		h := eh * 0.6
		c.FillPolygon(pc.pal.color(cat.Name), []vg.Point{{X: x, Y: y - h/2}, {X: x + legendSwatch, Y: y - h/2},
			{X: x + legendSwatch, Y: y + h/2}, {X: x, Y: y + h/2}})
		c.FillText(sty, vg.Point{X: x + legendSwatch + legendGap, Y: y}, label)
	}
	total := pc.split.Total()
	if total <= 0 {
		return
	}
	left := c.Min.X + legendSwatch + legendGap + listW + legendPad
	w, h := c.Max.X-left, c.Max.Y-c.Min.Y
	r := min(w, h) / 2 * 0.95
	if r <= 0 {
		return
	}
	center := vg.Point{X: left + w/2, Y: c.Min.Y + h/2}
	angle := math.Pi / 2 // twelve o'clock; wedges go clockwise
	label := draw.TextStyle{Color: color.Black, Font: font.From(sansFont, tickSize), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	for _, cat := range pc.split.Categories {
		if cat.Value <= 0 {
			continue
		}
		sweep := 2 * math.Pi * cat.Value / total
		var path vg.Path
		path.Move(center)
		path.Line(vg.Point{X: center.X + r*vg.Length(math.Cos(angle)), Y: center.Y + r*vg.Length(math.Sin(angle))})
		path.Arc(center, r, angle, -sweep)
		path.Close()
		c.SetColor(pc.pal.color(cat.Name))
		c.Fill(path)
		c.SetColor(color.White)
		c.SetLineWidth(vg.Points(1))
		c.Stroke(path)
		if share := pc.share(cat.Value); share >= 4 {
			mid := angle - sweep/2
			at := vg.Point{X: center.X + r*0.65*vg.Length(math.Cos(mid)), Y: center.Y + r*0.65*vg.Length(math.Sin(mid))}
			c.FillText(label, at, fmt.Sprintf("%.0f%%", share))
		}
		angle -= sweep
	}
}
