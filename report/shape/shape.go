// Package shape holds the generic shapes a workload's result gives the
// report to draw: tables with units, layer breakdowns, line charts (series
// and time-sequence graphs) and cost splits for pie charts. The report
// renders them as text, CSV, SVG/PNG and HTML without knowing which
// workload made them, so a new workload gets its tables and charts without
// a line in package report.
//
// It is a package of its own, beside the renderers in package report, so
// that workloads (software that runs on the simulated machines) can build
// these values without importing the chart libraries; it imports only the
// standard library. Every shape is plain data and round-trips through the
// result's JSON.
package shape

import (
	"fmt"
	"slices"
	"strings"
)

// Figures is everything a result gives the report to draw, in the order a
// reader meets it.
type Figures struct {
	// Tables are rendered in order: in the summary, the table format and
	// the HTML report.
	Tables []Table `json:"tables,omitempty"`
	// Breakdowns are the per-layer measurements behind the CSV and the
	// built-in "layers" and "latency" charts.
	Breakdowns []Breakdown `json:"breakdowns,omitempty"`
	// Charts are line charts the workload defines, each under its name.
	Charts []Chart `json:"charts,omitempty"`
	// Bars are charts of grouped, stacked bars, each under its name.
	Bars []Bars `json:"bars,omitempty"`
	// Splits are cost splits, drawn as pie charts (the built-in "splits"
	// chart) and tabulated.
	Splits []Split `json:"splits,omitempty"`
	// Text is preformatted text that follows the tables in the summary.
	Text string `json:"text,omitempty"`
}

// Empty reports whether there is nothing to draw.
func (f Figures) Empty() bool {
	return len(f.Tables) == 0 && len(f.Breakdowns) == 0 && len(f.Charts) == 0 && len(f.Bars) == 0 && len(f.Splits) == 0 && f.Text == ""
}

// Add appends o's figures after f's.
func (f *Figures) Add(o Figures) {
	f.Tables = append(f.Tables, o.Tables...)
	f.Breakdowns = append(f.Breakdowns, o.Breakdowns...)
	f.Charts = append(f.Charts, o.Charts...)
	f.Bars = append(f.Bars, o.Bars...)
	f.Splits = append(f.Splits, o.Splits...)
	f.Text += o.Text
}

// Table is one table: a title, columns with units, rows of formatted
// cells.
type Table struct {
	Title   string     `json:"title"`
	Columns []Column   `json:"columns"`
	Rows    [][]string `json:"rows"`
	// Prose marks columns of words, aligned left in text.
	Prose bool `json:"prose,omitempty"`
}

// Column is a table's column: a name and, when its values have one, a
// unit ("us", "Mbit/s").
type Column struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
}

// Heading is the column's name with its unit after it: "rtt us".
func (c Column) Heading() string {
	if c.Unit == "" {
		return c.Name
	}
	return c.Name + " " + c.Unit
}

// Cols returns columns without units, one per name.
func Cols(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Column{Name: n}
	}
	return out
}

// Headings returns the headings of t's columns.
func (t Table) Headings() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Heading()
	}
	return out
}

// Directions of a breakdown.
const (
	Send    = "send"
	Receive = "receive"
)

// Breakdown is one protocol's cycles by layer in one direction, a point
// per message size.
type Breakdown struct {
	Protocol  string  `json:"protocol"`  // "UDP", "MAC"
	Direction string  `json:"direction"` // Send or Receive
	SizeName  string  `json:"size_name"` // heading of the size column: "size", "payload"
	Unit      string  `json:"unit"`      // what the cycles are per: "message", "frame"
	What      string  `json:"what"`      // what the cycles cover, for titles
	Points    []Point `json:"points"`
}

// Point is one message size of a breakdown: the mean cycles of each layer
// per message and, when the workload measures one, the latency's
// statistics.
type Point struct {
	Size    int           `json:"size"`
	Layers  []LayerCycles `json:"layers"`
	Latency *Summary      `json:"latency,omitempty"`
}

// LayerCycles is the mean cycles of one layer.
type LayerCycles struct {
	Layer  string  `json:"layer"`
	Cycles float64 `json:"cycles"`
}

// Summary is a sample's statistics, in cycles.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// Cycles returns the point's cycles in layer, 0 when it has none.
func (p Point) Cycles(layer string) float64 {
	for _, l := range p.Layers {
		if l.Layer == layer {
			return l.Cycles
		}
	}
	return 0
}

// Total returns the point's mean latency: the measured mean when there is
// one, else the sum of its layers.
func (p Point) Total() float64 {
	if p.Latency != nil {
		return p.Latency.Mean
	}
	var t float64
	for _, l := range p.Layers {
		t += l.Cycles
	}
	return t
}

// HasLayers reports whether any point has a layer.
func (b Breakdown) HasLayers() bool {
	for _, p := range b.Points {
		if len(p.Layers) > 0 {
			return true
		}
	}
	return false
}

// LayerNames returns the layers any point of b has, in stack order.
func (b Breakdown) LayerNames() []string {
	var ls []string
	for _, p := range b.Points {
		for _, l := range p.Layers {
			if !slices.Contains(ls, l.Layer) {
				ls = append(ls, l.Layer)
			}
		}
	}
	SortLayers(ls)
	return ls
}

// Label names the breakdown in legends: "UDP send".
func (b Breakdown) Label() string { return b.Protocol + " " + b.Direction }

// LayerTable returns b as a table: a row per size, a column per layer in
// stack order and the total, values mean cycles.
func LayerTable(b Breakdown) Table {
	layers := b.LayerNames()
	t := Table{
		Title:   fmt.Sprintf("%s %s by layer (mean cycles per %s: %s)", b.Protocol, b.Direction, b.Unit, b.What),
		Columns: Cols(append(append([]string{b.SizeName}, layers...), "total")...),
	}
	for _, p := range b.Points {
		row := []string{fmt.Sprint(p.Size)}
		var total float64
		for _, l := range layers {
			c := p.Cycles(l)
			total += c
			row = append(row, fmt.Sprintf("%.0f", c))
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprintf("%.0f", total)))
	}
	return t
}

// LayerOrder is the order layers appear in tables, CSV rows and stacked
// bars: from the application down the stack to the device, then the
// kernel work that belongs to no protocol, as in the Linux/SimOS study's
// latency breakdowns. Layers not listed follow, sorted by name.
var LayerOrder = []string{
	"APPL",
	"PRES", "SES", "TRANS", "TP4",
	"TCP", "UDP",
	"CLNS", "IP",
	"LLC", "MAC",
	"DEV", "DMA",
	"KERN", "IDLE",
}

// layerRank returns where layer sorts: its place in LayerOrder, or after
// all of them.
func layerRank(layer string) int {
	if i := slices.Index(LayerOrder, layer); i >= 0 {
		return i
	}
	return len(LayerOrder)
}

// SortLayers sorts layer names into stack order.
func SortLayers(ls []string) {
	slices.SortFunc(ls, func(a, b string) int {
		if ra, rb := layerRank(a), layerRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
}

// Chart is a line chart a workload defines: one or more plots side by
// side, drawn under the chart's name (simkron report --chart NAME).
type Chart struct {
	Name    string `json:"name"`    // a word: "progress"
	Caption string `json:"caption"` // one sentence for the HTML report
	Plots   []Plot `json:"plots"`
}

// Plot is one panel of a chart. A nil bound is chosen from the data.
type Plot struct {
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	// XLog draws x on a log scale marked at powers of two, for byte sizes.
	XLog  bool     `json:"x_log,omitempty"`
	XMin  *float64 `json:"x_min,omitempty"`
	XMax  *float64 `json:"x_max,omitempty"`
	YMin  *float64 `json:"y_min,omitempty"`
	YMax  *float64 `json:"y_max,omitempty"`
	Lines []Line   `json:"lines"`
}

// Line is one curve of a plot; its colour is chosen by its position.
type Line struct {
	Label  string `json:"label"`
	Points []XY   `json:"points"`
	// Step draws the line as steps (a value holds until the next point),
	// as a time-sequence graph.
	Step bool `json:"step,omitempty"`
	// Dashed draws the line dashed; Marks puts a mark on each point.
	Dashed bool `json:"dashed,omitempty"`
	Marks  bool `json:"marks,omitempty"`
}

// XY is one point of a line.
type XY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Ptr returns a pointer to v, for a Plot's bounds.
func Ptr(v float64) *float64 { return &v }

// Bars is a chart of grouped, stacked bars: for each category on the x
// axis (a message size) a bar per group (a protocol) side by side, each a
// stack of parts (layers), as the Linux/SimOS study draws its latency
// breakdowns. One or more plots side by side (send, receive).
type Bars struct {
	Name    string    `json:"name"`
	Caption string    `json:"caption"`
	Plots   []BarPlot `json:"plots"`
}

// BarPlot is one panel of a bar chart.
type BarPlot struct {
	Title      string     `json:"title"`
	XLabel     string     `json:"x_label"`
	YLabel     string     `json:"y_label"`
	Categories []string   `json:"categories"`
	Groups     []BarGroup `json:"groups"` // left to right in each category
}

// BarGroup is one series of bars: a bar per category.
type BarGroup struct {
	Label string     `json:"label"`
	Parts []BarStack `json:"parts"` // bottom first
}

// BarStack is one part of every bar of a group: a value per category.
type BarStack struct {
	Label  string    `json:"label"`
	Values []float64 `json:"values"`
}

// Split is a cost split: how a quantity (a layer's processing cycles, say)
// divides into categories, drawn as a pie chart.
type Split struct {
	Title      string     `json:"title"`
	Unit       string     `json:"unit"` // of the values: "cycles"
	Categories []Category `json:"categories"`
}

// Category is one slice of a split.
type Category struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Total returns the sum of the split's values.
func (s Split) Total() float64 {
	var t float64
	for _, c := range s.Categories {
		t += c.Value
	}
	return t
}

// Table returns the split as a table: category, value and share.
func (s Split) Table() Table {
	t := Table{Title: s.Title, Columns: []Column{{Name: "category"}, {Name: "value", Unit: s.Unit}, {Name: "share", Unit: "%"}}}
	total := s.Total()
	for _, c := range s.Categories {
		share := 0.0
		if total > 0 {
			share = 100 * c.Value / total
		}
		t.Rows = append(t.Rows, []string{c.Name, fmt.Sprintf("%.0f", c.Value), fmt.Sprintf("%.1f", share)})
	}
	return t
}
