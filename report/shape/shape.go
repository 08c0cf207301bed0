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
// unit ("us", "Mbit/s"). Group names the columns that belong together
// ("send cycles" over "mean", "min", "median", "max"): consecutive columns
// of one group get one heading above theirs. Doc says what the column
// holds, for the HTML report's definitions under the table; a layer's
// column needs none (the report defines every layer).
type Column struct {
	Name  string `json:"name"`
	Unit  string `json:"unit,omitempty"`
	Group string `json:"group,omitempty"`
	Doc   string `json:"doc,omitempty"`
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

// ColumnGroup is a run of consecutive columns of one group (Name "" for
// columns of none) and how many columns it spans.
type ColumnGroup struct {
	Name string
	Span int
}

// ColumnGroups returns t's columns as runs of one group each, left to
// right; nil when no column has a group.
func (t Table) ColumnGroups() []ColumnGroup {
	if !slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Group != "" }) {
		return nil
	}
	var gs []ColumnGroup
	for i, c := range t.Columns {
		if i > 0 && gs[len(gs)-1].Name == c.Group {
			gs[len(gs)-1].Span++
			continue
		}
		gs = append(gs, ColumnGroup{Name: c.Group, Span: 1})
	}
	return gs
}

// SizeLabel writes a size in bytes as tables and charts name it: "4 B",
// "1472 B"; a whole number of KiB or MiB in those: "1 KiB", "32 KiB".
func SizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
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
	t.Columns[0].Doc = fmt.Sprintf("the %s's size in bytes", b.Unit)
	t.Columns[len(t.Columns)-1].Doc = fmt.Sprintf("the sum of the layers: the mean cycles per %s", b.Unit)
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

// Layer is one layer as every report shows it: its name, its colour in
// every chart and what its cycles are. A library routine (a copy, a
// checksum) counts in the layer that calls it.
type Layer struct {
	Name  string
	Color string // "#rrggbb"
	Doc   string
}

// Layers is the one table of layers: the names are those the core
// attributes cycles to (cpu's Layer constants, held to this table by
// cpu's TestLayersAgreeWithReportTable). Its order is the order layers
// appear in tables, CSV rows and stacked bars: from the application down
// the stack to the device, then the kernel work that belongs to no
// protocol, as in the Linux/SimOS study's latency breakdowns. Layers not
// listed follow, sorted by name, in colours the report picks.
//
// The colours are chosen so that the layers that can share a chart (the
// compare workload's eleven; the TOP stack's) are told apart by readers
// with each kind of colour blindness (CIEDE2000 difference of at least
// 10 under simulated protanopia, deuteranopia and tritanopia): the four
// transports take Okabe and Ito's orange, blue, bluish green and reddish
// purple (a protocol is drawn in its transport layer's colour), the rest
// come from Paul Tol's qualitative schemes, and the idle loop is pale
// grey. Two layers that never share a chart may be close (IP and MAC).
var Layers = []Layer{
	{"APPL", "#000000", "the application: the measuring program's own code"},
	{"PRES", "#999933", "the presentation layer (ISO 8823 kernel, BER encoding and decoding)"},
	{"SES", "#EE3377", "the session layer (ISO 8327-1 kernel and duplex)"},
	{"TRANS", "#009E73", "VIA's transport: the VIPL user-level library and the kernel agent it traps to"},
	{"TP4", "#CC79A7", "the ISO transport protocol, class 4 (ISO 8073)"},
	{"TCP", "#0072B2", "TCP (RFC 793)"},
	{"UDP", "#E69F00", "UDP (RFC 768)"},
	{"CLNS", "#666633", "the ISO connectionless network protocol (CLNP, ISO 8473)"},
	{"IP", "#AA3377", "IPv4 (RFC 791), fragmentation and reassembly included"},
	{"LLC", "#663333", "IEEE 802.2 logical link control"},
	{"MAC", "#AA4499", "the TOP stack's medium access layer, above the packet driver"},
	{"DEV", "#EEDD88", "the network device: the card's driver (its registers, interrupt handler and rings) and the kernel's device queueing and network softirqs"},
	{"DMA", "#66CCEE", "moving the message between host memory and the card, and waiting for it: the driver's transfers through the card's data port (programmed I/O) and its DMA set-up, and the cycles the processor waited in the measured span (for the card's DMA engine, and, when the span includes it, for the wire: each measurement's title says which)"},
	{"KERN", "#332288", "kernel (or TOP run-time) work that belongs to no protocol: system-call entry and exit, interrupt entry and exit, scheduling and context switches, timers"},
	{"IDLE", "#DDDDDD", "the idle loop: cycles in the measured span when the processor had nothing to run"},
}

// LayerNamed returns the layer called name in Layers.
func LayerNamed(name string) (Layer, bool) {
	i := slices.IndexFunc(Layers, func(l Layer) bool { return l.Name == name })
	if i < 0 {
		return Layer{}, false
	}
	return Layers[i], true
}

// layerRank returns where layer sorts: its place in Layers, or after all
// of them.
func layerRank(layer string) int {
	if i := slices.IndexFunc(Layers, func(l Layer) bool { return l.Name == layer }); i >= 0 {
		return i
	}
	return len(Layers)
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
