package report

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"simkron/report/shape"
)

// Every chart draws a series in the colour of what it is, the same in
// every chart: a layer in its colour of shape.Layers, a protocol in its
// transport layer's (VIA's is TRANS), a cost category of the TOP study in
// its own. Any other series (a ttcp run, a case of the TOP study) takes
// the first colour of positionColors that no series of its chart has
// taken, so that no two series of one chart share a colour while there
// are colours left; a chart of more series than there are colours
// repeats them, each repeat with a dashed line.

// protocolLayer names the layer whose colour a protocol that is not
// itself a layer takes.
var protocolLayer = map[string]string{"VIA": "TRANS"}

// categoryColors are the TOP study's cost categories (report/shape's
// splits): Okabe and Ito's blue, vermillion, orange and bluish green,
// and grey for the rest.
var categoryColors = map[string]string{
	"memory copy":       "#0072B2",
	"checksum":          "#D55E00",
	"memory management": "#E69F00",
	"task scheduling":   "#009E73",
	"others":            "#999999",
}

// positionColors are the colours of series that are none of the above:
// Okabe and Ito's eight (yellow, which lines on white hide, last) and
// Paul Tol's muted scheme after them. The first eight are told apart
// with each kind of colour blindness; past them, colours are less
// distinct.
var positionColors = []string{
	"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
	"#882255", "#999933", "#332288", "#44AA99", "#AA4499", "#888888",
}

// keyColor returns the fixed colour of the series called name: a
// layer's, a protocol's or a cost category's; false for any other.
func keyColor(name string) (string, bool) {
	if l, ok := protocolLayer[name]; ok {
		name = l
	}
	if l, ok := shape.LayerNamed(name); ok {
		return l.Color, true
	}
	c, ok := categoryColors[name]
	return c, ok
}

// palette hands out the colours of one chart's series: a series keeps
// its colour wherever it appears in the chart.
type palette struct {
	byName map[string]color.RGBA
	used   []string // hex colours taken
	next   int      // next position colour to try
	rounds int      // times the position colours ran out
	repeat map[string]bool
}

func newPalette() *palette {
	return &palette{byName: map[string]color.RGBA{}, repeat: map[string]bool{}}
}

// reserve takes the fixed colours of names first, so that a series
// without one never takes a colour a later fixed one needs.
func (p *palette) reserve(names []string) {
	for _, n := range names {
		if hex, ok := keyColor(n); ok {
			if _, done := p.byName[n]; !done {
				p.byName[n] = mustHex(hex)
				p.used = append(p.used, hex)
			}
		}
	}
}

// color returns the colour of the series called name.
func (p *palette) color(name string) color.RGBA {
	if c, ok := p.byName[name]; ok {
		return c
	}
	if hex, ok := keyColor(name); ok {
		p.byName[name] = mustHex(hex)
		p.used = append(p.used, hex)
		return p.byName[name]
	}
	for {
		if p.next == len(positionColors) {
			p.next = 0
			p.rounds++
		}
		hex := positionColors[p.next]
		p.next++
		if p.rounds > 0 || !slices.Contains(p.used, hex) {
			p.byName[name] = mustHex(hex)
			p.used = append(p.used, hex)
			p.repeat[name] = p.rounds > 0
			return p.byName[name]
		}
	}
}

// repeated reports whether the series called name took a colour another
// series of the chart has: it is drawn dashed to be told apart.
func (p *palette) repeated(name string) bool { return p.repeat[name] }

// mustHex parses "#rrggbb"; the colours are this package's own.
func mustHex(s string) color.RGBA {
	if len(s) != 7 || s[0] != '#' {
		panic(fmt.Sprintf("report: colour %q is not #rrggbb", s))
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		panic(fmt.Sprintf("report: colour %q: %v", s, err))
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// hexColor writes c as "#rrggbb".
func hexColor(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}
