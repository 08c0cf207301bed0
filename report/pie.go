package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"simkron/report/shape"
)

// splitColors gives the cost categories of the TOP study a fixed colour,
// the same in every pie; other categories take plotutil's by position.
var splitColors = map[string]color.RGBA{
	"memory copy":       {0x4e, 0x79, 0xa7, 0xff},
	"checksum":          {0xe1, 0x57, 0x59, 0xff},
	"memory management": {0xf2, 0x8e, 0x2b, 0xff},
	"task scheduling":   {0x76, 0xb7, 0xb2, 0xff},
	"others":            {0xba, 0xb0, 0xac, 0xff},
}

func splitColor(name string, i int) color.Color { return fixedColor(splitColors, name, i) }

// piePlot draws split s as a pie: a wedge per category with a positive
// value, clockwise from twelve o'clock in the split's order, each with
// its share, and a legend of the categories.
func piePlot(s shape.Split) *plot.Plot {
	p := plot.New()
	p.Title.Text = s.Title
	p.HideAxes()
	pie := &pie{split: s}
	p.Add(pie)
	for i, c := range s.Categories {
		p.Legend.Add(fmt.Sprintf("%s (%.1f%%)", c.Name, pie.share(c.Value)), swatch{splitColor(c.Name, i)})
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p
}

// pie is a plotter of one split.
type pie struct{ split shape.Split }

var _ plot.Plotter = (*pie)(nil)

func (pc *pie) share(v float64) float64 {
	if t := pc.split.Total(); t > 0 {
		return 100 * v / t
	}
	return 0
}

// Plot draws the wedges in the right part of the canvas, leaving the
// left for the legend.
func (pc *pie) Plot(c draw.Canvas, _ *plot.Plot) {
	total := pc.split.Total()
	if total <= 0 {
		return
	}
	w, h := c.Max.X-c.Min.X, c.Max.Y-c.Min.Y
	r := min(w*0.55, h) / 2 * 0.9
	center := vg.Point{X: c.Max.X - r - w*0.03, Y: c.Min.Y + h/2}
	angle := math.Pi / 2 // twelve o'clock; wedges go clockwise
	label := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(9)), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YCenter}
	for i, cat := range pc.split.Categories {
		if cat.Value <= 0 {
			continue
		}
		sweep := 2 * math.Pi * cat.Value / total
		var path vg.Path
		path.Move(center)
		path.Line(vg.Point{X: center.X + r*vg.Length(math.Cos(angle)), Y: center.Y + r*vg.Length(math.Sin(angle))})
		path.Arc(center, r, angle, -sweep)
		path.Close()
		c.SetColor(splitColor(cat.Name, i))
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

// swatch is a legend entry's square of colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Min.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Max.X, Y: c.Min.Y}}
	c.FillPolygon(s.c, c.ClipPolygonY(pts))
}
