package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"

	"simkron/report/shape"
	"simkron/sim"
)

// Waterfall is a stretch of simulated time drawn as rows, one above the
// other on one time axis: each host's core, coloured by the layer of what
// it ran, and between them the network's frames, from the moment a card
// handed each to the network to its arrival at the other host. Drawn for
// one message, it shows the message's send on one host, its time on the
// wire and its receive on the other (simkron run --trace-window
// message=..., then simkron report --trace). A trace reader
// (package timeline) makes it; the report draws it.
type Waterfall struct {
	Title string
	// From and To are the span drawn, in picoseconds.
	From, To int64
	Rows     []WaterfallRow
}

// WaterfallRow is one row: a host's core (its bars are layers) or a
// network (its bars are frames).
type WaterfallRow struct {
	Name  string
	Wire  bool
	Bars  []WaterfallBar
	Spans []WaterfallSpan
}

// WaterfallBar is a stretch of a row: for a core, what it ran (Layer: a
// layer's name, "-" for no function, Halted for the core waiting); for a
// network, a frame (Label says which).
type WaterfallBar struct {
	From, To int64
	Layer    string
	Label    string
	// Detail is a bar's tooltip: the function, the frame's bytes.
	Detail string
	// Sender and Receiver name the rows of a frame's hosts.
	Sender, Receiver string
}

// WaterfallSpan is a measurement the workload made on a row's host: the
// span it covers and what it counted.
type WaterfallSpan struct {
	From, To int64
	Label    string
}

// Halted is the layer of a waterfall bar in which the core waited for an
// interrupt.
const Halted = "halted"

// Layers returns the layers the waterfall's cores ran, in stack order.
func (w *Waterfall) Layers() []string {
	var ls []string
	for _, r := range w.Rows {
		for _, b := range r.Bars {
			if !r.Wire && b.Layer != Halted && !slices.Contains(ls, b.Layer) {
				ls = append(ls, b.Layer)
			}
		}
	}
	shape.SortLayers(ls)
	return ls
}

// The waterfall's geometry, in pixels.
const (
	wfLeft     = 120 // the rows' names
	wfRight    = 16
	wfTop      = 40
	wfRowH     = 30
	wfSpanH    = 22 // below a core's row, for its measurements
	wfGap      = 14
	wfAxisH    = 44
	wfLegendH  = 26
	wfFontSize = 11
)

// wfColor is the colour of a bar of layer l.
func wfColor(l string) string {
	switch l {
	case Halted:
		return "#ffffff"
	case "-":
		return "#bbbbbb"
	case "wire":
		return "#555555"
	}
	if c, ok := keyColor(l); ok {
		return c
	}
	return "#999999"
}

// WriteWaterfallSVG draws w as an SVG of the given width in pixels (0:
// the HTML report's).
func WriteWaterfallSVG(out io.Writer, w *Waterfall, width int) error {
	if width <= 0 {
		width = htmlChartWidth
	}
	if w.To <= w.From || len(w.Rows) == 0 {
		return fmt.Errorf("%w: the waterfall spans no time", ErrNoChartData)
	}
	plotW := float64(width - wfLeft - wfRight)
	x := func(t int64) float64 {
		return wfLeft + float64(t-w.From)/float64(w.To-w.From)*plotW
	}
	var b strings.Builder
	y := float64(wfTop)
	type rowAt struct{ top, bottom float64 }
	rows := make([]rowAt, len(w.Rows))
	for i, r := range w.Rows {
		rows[i].top = y
		y += wfRowH
		rows[i].bottom = y
		if len(r.Spans) > 0 {
			y += wfSpanH
		}
		y += wfGap
	}
	axisY := y
	height := int(axisY) + wfAxisH + wfLegendH
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	wfText(&b, wfLeft, 22, "start", w.Title, 14, "")
	// The time axis: ticks at a round step, in microseconds from the
	// span's start.
	span := float64(w.To-w.From) / float64(sim.Microsecond)
	step := niceStep(span / 8)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`+"\n", wfLeft, axisY, wfLeft+plotW, axisY)
	for v := 0.0; v <= span+1e-9; v += step {
		tx := wfLeft + v/span*plotW
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#e6e6e6"/>`+"\n", tx, wfTop-6, tx, axisY)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`+"\n", tx, axisY, tx, axisY+5)
		wfText(&b, tx, axisY+18, "middle", trimFloat(v), wfFontSize, "")
	}
	wfText(&b, wfLeft+plotW/2, axisY+36, "middle", fmt.Sprintf("simulated time (µs from %v)", sim.Time(w.From)), wfFontSize, "")
	for i, r := range w.Rows {
		ra := rows[i]
		wfText(&b, wfLeft-8, ra.top+wfRowH/2+4, "end", r.Name, wfFontSize, "")
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%.1f" height="%d" fill="#fafafa" stroke="#dddddd"/>`+"\n", wfLeft, ra.top, plotW, wfRowH)
		for _, bar := range r.Bars {
			x0, x1 := x(max(bar.From, w.From)), x(min(bar.To, w.To))
			if x1 <= x0 {
				continue
			}
			fill, layer := wfColor(bar.Layer), bar.Layer
			if r.Wire {
				fill = wfColor("wire")
			}
			tip := bar.Detail
			if tip == "" {
				tip = layer
			}
			tip += fmt.Sprintf(", %s", sim.Time(bar.To-bar.From))
			stroke := ""
			if layer == Halted {
				stroke = ` stroke="#cccccc" stroke-dasharray="3,2"`
			}
			top, h := ra.top+3, float64(wfRowH-6)
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"%s><title>%s</title></rect>`+"\n",
				x0, top, max(x1-x0, 0.5), h, fill, stroke, html.EscapeString(tip))
			if r.Wire && bar.Label != "" && wfWidth(bar.Label, wfFontSize) < x1-x0-4 {
				wfText(&b, (x0+x1)/2, ra.top+wfRowH/2+4, "middle", bar.Label, wfFontSize, ` fill="#ffffff"`)
			}
		}
		// The measurements, as brackets under the row, labelled where
		// the label fits.
		// A label goes inside its bracket, or beside it (right, then
		// left) where that is free of the others'; else it is left out.
		free := float64(wfLeft) // where the row's labels end so far
		for j, s := range r.Spans {
			x0, x1 := x(max(s.From, w.From)), x(min(s.To, w.To))
			sy := ra.bottom + 6
			fmt.Fprintf(&b, `<path d="M%.1f %.1f V%.1f H%.1f V%.1f" fill="none" stroke="#333"/>`+"\n", x0, sy-4, sy, x1, sy-4)
			lw := wfWidth(s.Label, wfFontSize)
			next := wfLeft + plotW
			if j+1 < len(r.Spans) {
				next = x(max(r.Spans[j+1].From, w.From)) - 4
			}
			var lx float64
			anchor := "middle"
			switch {
			case lw < x1-x0 && (x0+x1)/2-lw/2 >= free:
				lx = (x0 + x1) / 2
				free = lx + lw/2 + 4
			case x1+4+lw <= next:
				lx, anchor = x1+4, "start"
				free = lx + lw + 4
			case x0-4-lw >= free:
				lx, anchor = x0-4, "end"
				free = x1 + 4
			default:
				continue
			}
			wfText(&b, lx, sy+12, anchor, s.Label, wfFontSize, "")
		}
	}
	// A frame's path from its sender's row through the wire to its
	// receiver's: a line down at each end.
	for i, r := range w.Rows {
		if !r.Wire {
			continue
		}
		for _, bar := range r.Bars {
			for j, other := range w.Rows {
				at := bar.To
				switch other.Name {
				case bar.Sender:
					at = bar.From
				case bar.Receiver:
				default:
					continue
				}
				if other.Wire || at < w.From || at > w.To {
					continue
				}
				y0, y1 := rows[j].bottom, rows[i].top
				if j > i {
					y0, y1 = rows[i].bottom, rows[j].top
				}
				fmt.Fprintf(&b, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#555555" stroke-dasharray="2,2"/>`+"\n", x(at), y0, x(at), y1)
			}
		}
	}
	// The legend: the layers drawn, no function, halted.
	lx := float64(wfLeft)
	ly := float64(height - 10)
	items := append(w.Layers(), Halted)
	for _, l := range items {
		name := l
		switch l {
		case "-":
			name = "no function"
		case Halted:
			name = "halted (idle)"
		}
		wLabel := wfWidth(name, wfFontSize) + 30
		if lx+wLabel > float64(width-wfRight) {
			break
		}
		stroke := `stroke="#999999"`
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="14" height="10" fill="%s" %s/>`+"\n", lx, ly-9, wfColor(l), stroke)
		wfText(&b, lx+18, ly, "start", name, wfFontSize, "")
		lx += wLabel
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// wfText writes s at (x, y), anchored at its start, middle or end as
// the SVG's text-anchor would, but placed by its estimated width so that
// it is anchored at its start (as vgsvg's charts are, which the tests'
// checker reads), in the font size given.
func wfText(b *strings.Builder, x, y float64, anchor, s string, size int, attrs string) {
	w := wfWidth(s, size)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" style="font-size:%dpx"%s>%s</text>`+"\n", x, y, size, attrs, html.EscapeString(s))
}

// wfWidth estimates the width of s in a sans-serif font of size pixels,
// on the wide side.
func wfWidth(s string, size int) float64 { return float64(len([]rune(s))) * 0.6 * float64(size) }

// niceStep is the round step (1, 2 or 5 times a power of ten) nearest
// above v.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// trimFloat writes v with as few decimals as it needs (at most three).
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
