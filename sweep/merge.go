package sweep

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"simkron/report"
	"simkron/report/shape"
)

// Section is the merged result's own section, "sweep": the grid and each
// point's outcome and sections.
type Section struct {
	ID         string       `json:"id"`
	Grid       Grid         `json:"grid"`
	MasterSeed uint64       `json:"master_seed"`
	Points     []PointEntry `json:"points"`
}

// PointEntry is one point of the merged result.
type PointEntry struct {
	Index      int                        `json:"index"`
	Values     map[string]string          `json:"values"`
	Seed       uint64                     `json:"seed"`
	Detail     string                     `json:"detail,omitempty"` // as the point's result's
	Complete   bool                       `json:"complete"`
	Incomplete string                     `json:"incomplete_reason,omitempty"`
	SimTimePS  int64                      `json:"sim_time_ps"`
	Events     uint64                     `json:"events"`
	Sections   map[string]json.RawMessage `json:"sections"`
}

// Merge makes one result of a sweep's points (results in index order):
// section "sweep" holds every point's outcome and sections; the figures
// are the points' own, with the swept keys as an axis — tables gain a
// column per key, breakdowns, lines and splits are named after their
// point — and, when one numeric key is swept, chart "sweep" draws each
// breakdown's mean latency against it, a line per message size.
//
// A point that did not complete leaves the merged result incomplete; its
// reason names how many points did not and the first few (section
// "sweep" has every point's outcome).
func Merge(m *Manifest, results []*report.Result) *report.Result {
	g := m.Grid.Stored()
	points := make([]Point, len(results))
	for i := range points {
		points[i] = g.Point(i)
	}
	out := &report.Result{Header: report.Header{
		Schema:      report.Schema,
		Experiment:  "sweep",
		Description: fmt.Sprintf("a sweep of %s over %s", g.Config, axesText(g)),
		Seed:        m.MasterSeed,
		Workload:    "sweep",
	}}
	sec := Section{ID: m.ID, Grid: g, MasterSeed: m.MasterSeed}
	var tables []mergedTable
	var failed []string
	for i, r := range results {
		p := points[i]
		if out.Version == "" {
			out.Version = r.Version
			out.Experiment = r.Experiment + " sweep"
		}
		out.SimTimePS += r.SimTimePS
		out.Events += r.Events
		if !r.Complete {
			failed = append(failed, fmt.Sprintf("point %d (%s): %s", i, g.Label(p), r.Incomplete))
		}
		// The merged result is functional when every point is, and
		// "mixed" when only some are (a sweep of experiment.detail).
		switch {
		case i == 0:
			out.Detail = r.Detail
		case r.Detail != out.Detail:
			out.Detail = "mixed"
		}
		e := PointEntry{Index: i, Values: map[string]string{}, Seed: r.Seed, Detail: r.Detail, Complete: r.Complete, Incomplete: r.Incomplete,
			SimTimePS: r.SimTimePS, Events: r.Events, Sections: map[string]json.RawMessage{}}
		for k, a := range g.Axes {
			e.Values[a.Key] = p.Values[k]
		}
		for _, s := range r.Sections {
			if s.Name == PointSection {
				continue // the entry says which point it is
			}
			raw, ok := s.Value.(json.RawMessage)
			if !ok {
				raw, _ = json.Marshal(s.Value)
			}
			e.Sections[s.Name] = raw
		}
		sec.Points = append(sec.Points, e)
		label := "[" + g.Label(p) + "]"
		f := r.Figures
		for _, t := range f.Tables {
			tables = addRows(tables, g, p, t)
		}
		for _, b := range f.Breakdowns {
			b.Protocol += " " + label
			out.Figures.Breakdowns = append(out.Figures.Breakdowns, b)
		}
		for _, c := range f.Charts {
			out.Figures.Charts = mergeChart(out.Figures.Charts, c, label)
		}
		for _, c := range f.Bars {
			out.Figures.Bars = mergeBars(out.Figures.Bars, c, label)
		}
		for _, s := range f.Splits {
			s.Title += " " + label
			out.Figures.Splits = append(out.Figures.Splits, s)
		}
		if f.Text != "" {
			out.Figures.Text += label + "\n" + f.Text
		}
	}
	out.Complete, out.Incomplete = incomplete(failed, len(results))
	for _, t := range tables {
		out.Figures.Tables = append(out.Figures.Tables, t.Table)
	}
	if c, ok := axisChart(g, points, results); ok {
		out.Figures.Charts = append(out.Figures.Charts, c)
	}
	out.Sections = []report.Section{{Name: "sweep", Value: sec}}
	return out
}

// incomplete says whether every point completed and, if not, which did
// not: the first (as it always did), or how many and the first three.
func incomplete(failed []string, total int) (bool, string) {
	const most = 3
	switch n := len(failed); {
	case n == 0:
		return true, ""
	case n == 1:
		return false, failed[0]
	case n <= most:
		return false, fmt.Sprintf("%d of %d points incomplete: %s", n, total, strings.Join(failed, "; "))
	default:
		return false, fmt.Sprintf("%d of %d points incomplete: %s; and %d more (section \"sweep\" has each point's outcome)",
			n, total, strings.Join(failed[:most], "; "), n-most)
	}
}

func axesText(g Grid) string {
	parts := make([]string, len(g.Axes))
	for i, a := range g.Axes {
		parts[i] = a.Key + " = " + strings.Join(a.Values, ", ")
	}
	return strings.Join(parts, "; ")
}

// mergedTable is the points' tables of one title and columns, a row per
// point's row with the point's values in front.
type mergedTable struct {
	key string
	shape.Table
}

func addRows(ts []mergedTable, g Grid, p Point, t shape.Table) []mergedTable {
	key := t.Title + "\x00" + strings.Join(t.Headings(), "\x00")
	i := slices.IndexFunc(ts, func(m mergedTable) bool { return m.key == key })
	if i < 0 {
		mt := mergedTable{key: key, Table: shape.Table{Title: t.Title, Prose: t.Prose}}
		for _, a := range g.Axes {
			mt.Columns = append(mt.Columns, shape.Column{Name: a.Key})
		}
		mt.Columns = append(mt.Columns, t.Columns...)
		ts = append(ts, mt)
		i = len(ts) - 1
	}
	for _, row := range t.Rows {
		ts[i].Rows = append(ts[i].Rows, append(slices.Clone(p.Values), row...))
	}
	return ts
}

// mergeChart adds chart c of one point to the merged charts: lines of the
// same plot of the same chart go together, named after their point.
func mergeChart(cs []shape.Chart, c shape.Chart, label string) []shape.Chart {
	i := slices.IndexFunc(cs, func(x shape.Chart) bool { return x.Name == c.Name })
	if i < 0 {
		nc := c
		nc.Plots = nil
		for _, p := range c.Plots {
			p.Lines = nil
			nc.Plots = append(nc.Plots, p)
		}
		cs = append(cs, nc)
		i = len(cs) - 1
	}
	for k, p := range c.Plots {
		if k >= len(cs[i].Plots) {
			break
		}
		for _, l := range p.Lines {
			l.Label += " " + label
			cs[i].Plots[k].Lines = append(cs[i].Plots[k].Lines, l)
		}
	}
	return cs
}

// mergeBars adds bar chart c of one point: its groups join the groups of
// the plot of the same chart with the same title and categories, named
// after their point; a plot with other categories is a plot of its own.
func mergeBars(cs []shape.Bars, c shape.Bars, label string) []shape.Bars {
	i := slices.IndexFunc(cs, func(x shape.Bars) bool { return x.Name == c.Name })
	if i < 0 {
		cs = append(cs, shape.Bars{Name: c.Name, Caption: c.Caption})
		i = len(cs) - 1
	}
	for _, p := range c.Plots {
		for k := range p.Groups {
			p.Groups[k].Label += " " + label
		}
		plots := cs[i].Plots
		j := slices.IndexFunc(plots, func(x shape.BarPlot) bool {
			return x.Title == p.Title && slices.Equal(x.Categories, p.Categories)
		})
		if j < 0 {
			cs[i].Plots = append(plots, p)
			continue
		}
		plots[j].Groups = append(plots[j].Groups, p.Groups...)
	}
	return cs
}

// axisChart draws, when exactly one key is swept (over numbers), each
// breakdown's mean latency against the key: a plot per breakdown (protocol
// and direction), a line per message size. No y bound is set, so that the
// report can share the plots' y axis and draw it logarithmic when the
// sizes' latencies span decades.
func axisChart(g Grid, points []Point, results []*report.Result) (shape.Chart, bool) {
	// The swept key: the one axis of more than one value (axes of one
	// value are fixed settings).
	k := -1
	for i, a := range g.Axes {
		if len(a.Values) > 1 {
			if k >= 0 {
				return shape.Chart{}, false
			}
			k = i
		}
	}
	if k < 0 {
		return shape.Chart{}, false
	}
	xs := make([]float64, len(points))
	for i, p := range points {
		v, err := strconv.ParseFloat(p.Values[k], 64)
		if err != nil {
			return shape.Chart{}, false
		}
		xs[i] = v
	}
	key := g.Axes[k].Key
	c := shape.Chart{Name: "sweep", Caption: "Mean latency against " + key + ": a plot per protocol and direction, a line per message size."}
	plots := map[string]int{}
	for i, r := range results {
		for _, b := range r.Figures.Breakdowns {
			name := b.Label()
			j, ok := plots[name]
			if !ok {
				j = len(c.Plots)
				plots[name] = j
				c.Plots = append(c.Plots, shape.Plot{Title: name + ": mean cycles per " + b.Unit + " against " + key,
					XLabel: key, YLabel: "mean cycles"})
			}
			for _, pt := range b.Points {
				label := strconv.Itoa(pt.Size) + " B"
				pl := &c.Plots[j]
				k := slices.IndexFunc(pl.Lines, func(l shape.Line) bool { return l.Label == label })
				if k < 0 {
					pl.Lines = append(pl.Lines, shape.Line{Label: label, Marks: true})
					k = len(pl.Lines) - 1
				}
				pl.Lines[k].Points = append(pl.Lines[k].Points, shape.XY{X: xs[i], Y: pt.Total()})
			}
		}
	}
	return c, len(c.Plots) > 0
}
