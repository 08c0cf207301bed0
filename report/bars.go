package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"simkron/report/shape"
)

// stacks is a plotter of bars, each a stack of coloured parts, at x
// positions in data units. On a linear y axis the parts stack from 0. On
// a log y axis a stack of parts cannot be drawn as it is (each part's
// height would depend on what lies below it), so a bar rises from the
// axis' floor to its total and is divided among its parts in proportion
// to their values: a part's share of the bar is its share of the total.
type stacks struct {
	bars  []bar
	width float64 // of every bar, in x data units
	log   bool
	floor float64 // a bar's base on a log axis
}

// bar is one bar: its centre and its parts, bottom first.
type bar struct {
	x     float64
	parts []barPart
}

type barPart struct {
	v float64
	c color.Color
}

var (
	_ plot.Plotter    = (*stacks)(nil)
	_ plot.DataRanger = (*stacks)(nil)
)

// total returns the sum of b's positive, finite parts.
func (b bar) total() float64 {
	var t float64
	for _, p := range b.parts {
		if p.v > 0 && !math.IsInf(p.v, 1) {
			t += p.v
		}
	}
	return t
}

func (s *stacks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, b := range s.bars {
		t := b.total()
		if t <= 0 {
			continue
		}
		x0, x1 := trX(b.x-s.width/2), trX(b.x+s.width/2)
		rect := func(y0, y1 vg.Length, col color.Color) {
			pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			if clipped := c.ClipPolygonXY(pts); len(clipped) > 0 {
				c.FillPolygon(col, clipped)
			}
		}
		if s.log {
			base, top := trY(math.Log10(s.floor)), trY(math.Log10(t))
			at := base
			for _, pt := range b.parts {
				if pt.v > 0 && !math.IsInf(pt.v, 1) {
					h := (top - base) * vg.Length(pt.v/t)
					rect(at, at+h, pt.c)
					at += h
				}
			}
			continue
		}
		var acc float64
		for _, pt := range b.parts {
			if pt.v > 0 && !math.IsInf(pt.v, 1) {
				y0 := trY(acc)
				acc += pt.v
				rect(y0, trY(acc), pt.c)
			}
		}
	}
}

func (s *stacks) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = 0, 0
	for _, b := range s.bars {
		xmin = math.Min(xmin, b.x-s.width/2)
		xmax = math.Max(xmax, b.x+s.width/2)
		ymax = math.Max(ymax, b.total())
	}
	if s.log {
		ymin, ymax = math.Log10(s.floor), math.Log10(math.Max(ymax, s.floor))
	}
	if xmin > xmax {
		xmin, xmax = 0, 1
	}
	return xmin, xmax, ymin, ymax
}

// yScale is the y axis shared by panels of bars: linear from 0, or
// logarithmic from a power of ten below the smallest total when the
// totals span more than a decade.
type yScale struct {
	log        bool
	floor, top float64
}

// decade is how far apart the smallest and largest values of a panel
// may be before its y axis is logarithmic (or its bars split into size
// ranges): beyond it the small values sit on the axis.
const decade = 10

// barScale returns the y axis for bars of these totals.
func barScale(totals []float64, logOK bool) yScale {
	lo, hi := math.Inf(1), 0.0
	for _, t := range totals {
		if t > 0 && !math.IsInf(t, 1) {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
	}
	if hi == 0 {
		return yScale{top: 1}
	}
	if logOK && hi/lo > 2*decade {
		return yScale{log: true, floor: math.Pow(10, math.Floor(math.Log10(lo/2))), top: hi * 1.3}
	}
	return yScale{top: hi * 1.08}
}

// apply sets p's y axis to s: a log axis is a linear axis of the
// values' logarithms (see logTicks).
func (s yScale) apply(p *plot.Plot) {
	if s.log {
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = math.Log10(s.floor), math.Log10(s.top)
		return
	}
	p.Y.Tick.Marker = cycleTicks{}
	p.Y.Min, p.Y.Max = 0, s.top
}

// legendLayers returns the legend of a figure of stacked layers: each
// layer once, in the order they stack, the top one first.
func legendLayers(layers []string, pal *palette) []entry {
	shape.SortLayers(layers)
	var es []entry
	for i := len(layers) - 1; i >= 0; i-- {
		es = append(es, entry{label: layers[i], color: pal.color(layers[i]), fill: true})
	}
	return es
}

// plotWidth estimates the width in points of the data area of a panel
// of a figure cols panels wide, beside a legend of legendW.
func plotWidth(size ChartSize, cols int, legendW vg.Length) vg.Length {
	w, _ := size.dims(1)
	return (w-legendW)/vg.Length(max(cols, 1)) - vg.Points(70)
}

// layersFigure draws each breakdown as bars of cycles by layer, a bar
// per message size, a panel per protocol (a row) and direction (send on
// the left): the built-in "layers" chart. Every panel has the same y
// scale, logarithmic when the totals span more than a decade.
func layersFigure(r *Result, size ChartSize) (*figure, error) {
	bs := breakdowns(r)
	if len(bs) == 0 {
		return nil, fmt.Errorf("%w: %s needs per-layer measurements (workload %q)", ErrNoChartData, ChartLayers, r.Workload)
	}
	f := &figure{legendTitle: "layer"}
	pal := newPalette()
	var layers, all []string
	var totals []float64
	for _, b := range bs {
		for _, l := range b.LayerNames() {
			if !slices.Contains(all, l) {
				all = append(all, l)
			}
		}
		for _, pt := range b.Points {
			var t float64
			for _, l := range pt.Layers {
				t += l.Cycles
			}
			totals = append(totals, t)
		}
	}
	layers = append(layers, all...)
	pal.reserve(layers)
	f.legend = legendLayers(layers, pal)
	ys := barScale(totals, true)
	cols := 1
	for _, b := range bs {
		if b.Direction == shape.Receive {
			cols = 2
		}
	}
	width := plotWidth(size, cols, f.legendWidth(1))
	var protocols []string
	for _, b := range bs {
		if len(protocols) == 0 || protocols[len(protocols)-1] != b.Protocol {
			protocols = append(protocols, b.Protocol)
			f.rows = append(f.rows, make([]*plot.Plot, cols))
		}
		col := 0
		if b.Direction == shape.Receive {
			col = 1
		}
		// A log scale shows in its ticks (1k, 10k); the caption says so.
		p := newPlot(b.Label(), b.SizeName, "mean cycles per "+b.Unit, true)
		st := &stacks{width: 0.7, log: ys.log, floor: ys.floor}
		names := make([]string, len(b.Points))
		for i, pt := range b.Points {
			names[i] = shape.SizeLabel(pt.Size)
			br := bar{x: float64(i)}
			for _, l := range b.LayerNames() {
				br.parts = append(br.parts, barPart{v: pt.Cycles(l), c: pal.color(l)})
			}
			st.bars = append(st.bars, br)
		}
		p.Add(st)
		p.X.Tick.Marker = nominalTicks(names, width)
		p.X.Min, p.X.Max = -0.6, float64(len(b.Points))-0.4
		ys.apply(p)
		f.rows[len(f.rows)-1][col] = p
	}
	f.caption = layersCaption(bs, ys)
	return f, nil
}

// layersCaption says what the layers chart shows.
func layersCaption(bs []shape.Breakdown, ys yScale) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Mean cycles per %s of each layer, a bar per size and a panel per protocol and direction. ", bs[0].Unit)
	var whats []string
	who := map[string][]string{}
	for _, x := range bs {
		if x.What == "" {
			continue
		}
		if _, ok := who[x.What]; !ok {
			whats = append(whats, x.What)
		}
		who[x.What] = append(who[x.What], x.Label())
	}
	switch {
	case len(whats) > 2:
		// Each protocol's own call: its layer table's title says.
		b.WriteString("Each panel measures what the title of its table (\"UDP send by layer\", ...) says. ")
	case len(whats) > 0:
		for i, w := range whats {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %s", strings.Join(who[w], ", "), w)
		}
		b.WriteString(". ")
	}
	if ys.log {
		b.WriteString("The y scale, shared by every panel, is logarithmic: a bar's height is its total, and the bar is divided among its layers in proportion to their cycles (a layer's part of the bar is its share of the total, not its cycles on the scale).")
	} else {
		b.WriteString("Every panel has the same y scale.")
	}
	return b.String()
}

// sizeRange is a run of consecutive categories drawn in one panel.
type sizeRange struct{ from, to int } // categories [from, to)

// spread returns how far apart the tallest bars of categories [i, j)
// are: the largest over the smallest (categories of no bar left out).
func spread(tallest []float64, i, j int) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, t := range tallest[i:j] {
		if t > 0 {
			lo, hi = math.Min(lo, t), math.Max(hi, t)
		}
	}
	if hi == 0 {
		return 1
	}
	return hi / lo
}

// splitRanges cuts the categories of a bar chart into as few runs as it
// can such that in each the tallest bars are within a decade of each
// other (so that a linear scale shows them all) and there are at most
// most categories; of the cuts into that many runs it takes the one
// whose widest spread is least.
func splitRanges(tallest []float64, most int) []sizeRange {
	n := len(tallest)
	most = max(most, 1)
	if n == 0 {
		return nil
	}
	// best[k][j]: the least widest spread of the first j categories cut
	// into k runs; from[k][j] where its last run starts.
	inf := math.Inf(1)
	best := [][]float64{make([]float64, n+1)}
	from := [][]int{make([]int, n+1)}
	for j := 1; j <= n; j++ {
		best[0][j] = inf
	}
	for k := 1; k <= n; k++ {
		b, f := make([]float64, n+1), make([]int, n+1)
		b[0] = inf
		for j := 1; j <= n; j++ {
			b[j] = inf
			for i := max(j-most, 0); i < j; i++ {
				if best[k-1][i] == inf && i > 0 {
					continue
				}
				w := spread(tallest, i, j)
				if i > 0 {
					w = math.Max(w, best[k-1][i])
				}
				if w < b[j] {
					b[j], f[j] = w, i
				}
			}
		}
		best, from = append(best, b), append(from, f)
		if b[n] <= decade || k == n {
			var rs []sizeRange
			for j, kk := n, k; kk > 0; kk-- {
				i := from[kk][j]
				rs = append([]sizeRange{{i, j}}, rs...)
				j = i
			}
			return rs
		}
	}
	return []sizeRange{{0, n}}
}

// barsFigure draws a workload's grouped stacked bars (the compare
// workload's layers of each protocol side by side) as small multiples:
// the categories (message sizes) cut into ranges a linear scale shows
// (see splitRanges), a panel per plot and range, each a full row; the
// panels of one range share their y scale. Each bar is labelled with its
// group below it, the category below the group's bars.
func barsFigure(ch shape.Bars, size ChartSize) (*figure, error) {
	f := &figure{legendTitle: "layer", rowHeight: 300}
	pal := newPalette()
	var labels []string
	ncat := 0
	groups := 0
	for _, bp := range ch.Plots {
		ncat = max(ncat, len(bp.Categories))
		groups = max(groups, len(bp.Groups))
		for _, g := range bp.Groups {
			for _, part := range g.Parts {
				if !slices.Contains(labels, part.Label) {
					labels = append(labels, part.Label)
				}
			}
		}
	}
	pal.reserve(labels)
	f.legend = legendLayers(labels, pal)
	// The tallest bar of each category over every plot.
	tallest := make([]float64, ncat)
	for _, bp := range ch.Plots {
		for _, g := range bp.Groups {
			for k := range tallest {
				var t float64
				for _, part := range g.Parts {
					if k < len(part.Values) && part.Values[k] > 0 && !math.IsInf(part.Values[k], 1) {
						t += part.Values[k]
					}
				}
				tallest[k] = math.Max(tallest[k], t)
			}
		}
	}
	width := plotWidth(size, 1, f.legendWidth(1))
	sty := textStyle(tickSize)
	var widest vg.Length
	for _, bp := range ch.Plots {
		for _, g := range bp.Groups {
			widest = max(widest, sty.Width(g.Label))
		}
	}
	slot := widest + vg.Points(6)
	most := int(width / (slot * vg.Length(max(groups, 1)+1)))
	rotate := most < 1
	if rotate {
		slot = sty.Height("Xg") * 1.6
		most = max(int(width/(slot*vg.Length(max(groups, 1)+1))), 1)
	}
	ranges := splitRanges(tallest, most)
	for _, rg := range ranges {
		var ts []float64
		for k := rg.from; k < rg.to; k++ {
			ts = append(ts, tallest[k])
		}
		ys := barScale(ts, false)
		for _, bp := range ch.Plots {
			title := bp.Title
			if len(ranges) > 1 && rg.to <= len(bp.Categories) {
				title = fmt.Sprintf("%s, %s to %s", bp.Title, bp.Categories[rg.from], bp.Categories[rg.to-1])
				if rg.to-rg.from == 1 {
					title = fmt.Sprintf("%s, %s", bp.Title, bp.Categories[rg.from])
				}
			}
			p := newPlot(title, bp.XLabel, bp.YLabel, true)
			ng := max(len(bp.Groups), 1)
			w := 1 / (float64(ng) + 1) // a bar and its share of the gap
			st := &stacks{width: w * 0.85}
			var ticks []plot.Tick
			for k := rg.from; k < rg.to; k++ {
				x0 := float64(k-rg.from) - w*float64(ng-1)/2
				for gi, g := range bp.Groups {
					br := bar{x: x0 + float64(gi)*w}
					for _, part := range g.Parts {
						v := 0.0
						if k < len(part.Values) {
							v = part.Values[k]
						}
						br.parts = append(br.parts, barPart{v: v, c: pal.color(part.Label)})
					}
					st.bars = append(st.bars, br)
					ticks = append(ticks, plot.Tick{Value: br.x, Label: g.Label})
				}
				if k < len(bp.Categories) {
					ticks = append(ticks, plot.Tick{Value: float64(k - rg.from), Label: "\n" + bp.Categories[k]})
				}
			}
			p.Add(st)
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			p.X.Tick.Length = 0
			if rotate {
				p.X.Tick.Label.Rotation = math.Pi / 2
				p.X.Tick.Label.XAlign = draw.XRight
				p.X.Tick.Label.YAlign = draw.YCenter
			}
			p.X.Min, p.X.Max = -0.5, float64(rg.to-rg.from)-0.5
			ys.apply(p)
			f.rows = append(f.rows, []*plot.Plot{p})
		}
	}
	f.caption = ch.Caption
	if len(ranges) > 1 {
		f.caption += fmt.Sprintf(" The sizes are cut into %d ranges, a panel each, so that each panel's linear scale shows its smallest bars (in each range the tallest bars of its sizes are within a decade of each other); the panels of a range share their y scale.", len(ranges))
	} else if len(ch.Plots) > 1 {
		f.caption += " The panels share their y scale."
	}
	f.caption += " Each bar is labelled with its " + groupNoun(ch) + " below it."
	return f, nil
}

// groupNoun names what a bar chart's groups are, for its caption.
func groupNoun(ch shape.Bars) string {
	for _, bp := range ch.Plots {
		for _, g := range bp.Groups {
			if _, ok := keyColor(g.Label); ok {
				return "protocol"
			}
		}
	}
	return "series"
}
