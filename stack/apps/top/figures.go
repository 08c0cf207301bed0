package top

import (
	"errors"
	"fmt"
	"slices"

	"simkron/report/shape"
	"simkron/stack/osi"
	tophost "simkron/stack/top"
	"simkron/workload"
)

// Section is the workload's result in result.json: every point in the
// order it ran (remote ones, then loopback ones), and each station's
// counters.
type Section struct {
	Points   []*point          `json:"points"`
	Stations []StationCounters `json:"stations"`
}

// StationCounters are one station's programs and ticks.
type StationCounters struct {
	Host string `json:"host"`
	tophost.StationStats
}

// Result returns the points, their tables, the throughput charts and the
// cost splits.
func (b *bench) Result() (workload.Result, error) {
	all := append(slices.Clone(b.remote), b.loops...)
	sec := Section{Points: all}
	for _, st := range []*tophost.Station{b.orig, b.recp, b.loop} {
		if st != nil {
			sec.Stations = append(sec.Stations, StationCounters{Host: st.Name(), StationStats: st.Stats()})
		}
	}
	res := workload.Result{Sections: []workload.Section{{Name: "top", Value: sec}}}
	done := b.ri + b.li
	for _, pt := range all {
		if pt.exited > 0 {
			pt.finish()
		}
	}
	for _, pt := range all {
		if pt.Error != "" && res.Incomplete == "" {
			res.Incomplete = fmt.Sprintf("top: %v user, %s, %d B: %s", pt.lv, pt.Where, pt.Size, pt.Error)
		}
	}
	if res.Incomplete == "" && done < len(all) {
		res.Incomplete = fmt.Sprintf("top: %d of %d points measured", done, len(all))
	}
	f := &res.Figures
	if t, ok := calibrationTable(all); ok {
		f.Tables = append(f.Tables, t)
	}
	f.Tables = append(f.Tables, b.throughputTables()...)
	f.Tables = append(f.Tables, pointTable(all))
	f.Charts = append(f.Charts, b.throughputCharts()...)
	tables, splits, charts := b.splits()
	f.Tables = append(f.Tables, tables...)
	f.Splits = append(f.Splits, splits...)
	f.Charts = append(f.Charts, charts...)
	return res, errors.Join(b.errRemote, b.errLoop)
}

// published is one of the study's calibration figures
// (docs/reference/osi-top.md, sec. 9) and how to read the simulated one from the points.
type published struct {
	what, where string
	study       float64
	text        string // the study's value as it gives it
	unit        string
	sim         func(mac map[string]*point) (float64, bool)
}

// macPoint returns the MAC user's point at 1024 B in where.
func macAt(mac map[string]*point, where string) (*point, bool) {
	pt, ok := mac[where]
	return pt, ok && pt.Error == "" && pt.Mbps > 0
}

// calibrations are the figures the study publishes for the MAC user at
// 1024 B, remote and in packet-driver loopback.
var calibrations = []published{
	{what: "MAC user, remote, 1024 B", where: "sec. 4, Fig. 6; abstract", study: 6, text: "about 6", unit: "Mbit/s",
		sim: func(m map[string]*point) (float64, bool) {
			pt, ok := macAt(m, Remote)
			return pt.mbps(), ok
		}},
	{what: "Tsend (packet-driver send of a 1024-B frame: load and wire)", where: "sec. 4", study: 1.4, text: "1.4", unit: "ms",
		sim: func(m map[string]*point) (float64, bool) {
			pt, ok := macAt(m, Remote)
			return pt.tsendMS(), ok && pt.TsendUS > 0
		}},
	{what: "MAC user, loopback, 1024 B", where: "sec. 4, Fig. 8 (sec. 5: 42)", study: 43, text: "about 43", unit: "Mbit/s",
		sim: func(m map[string]*point) (float64, bool) {
			pt, ok := macAt(m, Loopback)
			return pt.mbps(), ok
		}},
	{what: "Tcopy (loopback copy of a 1024-B frame)", where: "sec. 4", study: 0.22, text: "about 0.22", unit: "ms",
		sim: func(m map[string]*point) (float64, bool) {
			pt, ok := macAt(m, Loopback)
			return pt.copyMS(), ok && pt.CopyUS > 0
		}},
	{what: "MAC user, loopback over remote, 1024 B", where: "sec. 4", study: 7, text: "about 7", unit: "×",
		sim: func(m map[string]*point) (float64, bool) {
			r, ok1 := macAt(m, Remote)
			l, ok2 := macAt(m, Loopback)
			if !ok1 || !ok2 {
				return 0, false
			}
			return l.Mbps / r.Mbps, true
		}},
}

func (pt *point) mbps() float64 {
	if pt == nil {
		return 0
	}
	return pt.Mbps
}

func (pt *point) tsendMS() float64 {
	if pt == nil {
		return 0
	}
	return pt.TsendUS / 1000
}

func (pt *point) copyMS() float64 {
	if pt == nil {
		return 0
	}
	return pt.CopyUS / 1000
}

// calibrationTable puts each of the study's calibration figures beside
// the simulated one, where the run measured it (the MAC user at 1024 B),
// with the study's section or figure and the difference; false when the
// run measured none.
func calibrationTable(pts []*point) (shape.Table, bool) {
	mac := map[string]*point{}
	for _, pt := range pts {
		if pt.lv == tophost.LevelMAC && pt.Size == 1024 {
			mac[pt.Where] = pt
		}
	}
	t := shape.Table{Title: "top: the study's calibration figures (docs/reference/osi-top.md, sec. 9) beside the simulated ones",
		Columns: []shape.Column{{Name: "figure"}, {Name: "study"}, {Name: "simulated"}, {Name: "unit"}, {Name: "difference", Unit: "%"}, {Name: "in the study"}}, Prose: true}
	for _, c := range calibrations {
		v, ok := c.sim(mac)
		if !ok {
			continue
		}
		t.Rows = append(t.Rows, []string{c.what, c.text, fmt.Sprintf("%.3g", v), c.unit, fmt.Sprintf("%+.1f", 100*(v-c.study)/c.study), c.where})
	}
	return t, len(t.Rows) > 0
}

// charts returns the charts' names in the order the cases name them.
func (b *bench) charts() []string {
	var out []string
	for _, c := range b.p.Cases {
		if !slices.Contains(out, c.Chart) {
			out = append(out, c.Chart)
		}
	}
	return out
}

// chartLines returns the lines of chart at where, with their labels: the
// level's name when the chart has one case, the case's when each case
// has one level, both otherwise.
func (b *bench) chartLines(chart, where string) ([]caseLine, []string) {
	var ls []caseLine
	cases, levels := map[int]bool{}, map[tophost.Level]bool{}
	for _, l := range b.lines {
		if b.p.Cases[l.c].Chart == chart {
			cases[l.c], levels[l.lv] = true, true
			if l.where == where {
				ls = append(ls, l)
			}
		}
	}
	var labels []string
	for _, l := range ls {
		name := b.p.Cases[l.c].Name
		switch {
		case len(cases) == 1:
			labels = append(labels, l.lv.String())
		case len(levels) == 1:
			labels = append(labels, name)
		default:
			labels = append(labels, l.lv.String()+" "+name)
		}
	}
	return ls, labels
}

// throughputTables are each chart's throughputs by size, a table for each
// place it was measured.
func (b *bench) throughputTables() []shape.Table {
	var out []shape.Table
	for _, chart := range b.charts() {
		for _, where := range []string{Remote, Loopback} {
			ls, labels := b.chartLines(chart, where)
			if len(ls) == 0 {
				continue
			}
			t := shape.Table{Title: fmt.Sprintf("%s, %s: throughput of the useful bytes (Mbit/s, exactly timed from the first message to the reply to the last)", chart, where),
				Columns: []shape.Column{{Name: "size", Unit: "B"}}}
			for _, l := range labels {
				t.Columns = append(t.Columns, shape.Column{Name: l})
			}
			t.Columns[0].Doc = "the message's size in octets; every other column is a line of the chart: a layer user and case"
			for i, n := range b.p.Sizes {
				row := []string{fmt.Sprint(n)}
				for _, l := range ls {
					row = append(row, mbps(l.points[i], l.points[i].Mbps))
				}
				t.Rows = append(t.Rows, row)
			}
			out = append(out, t)
		}
	}
	return out
}

// throughputCharts draw each chart's throughputs against size, a plot
// for each place.
func (b *bench) throughputCharts() []shape.Chart {
	var out []shape.Chart
	for _, chart := range b.charts() {
		ch := shape.Chart{Name: chart, Caption: fmt.Sprintf("%s: throughput of the useful bytes against message size, a line per layer user and case, between two PCs and in packet-driver loopback (the TOP study's way: messages from the first sent to the reply to the last).", chart)}
		for _, where := range []string{Remote, Loopback} {
			ls, labels := b.chartLines(chart, where)
			if len(ls) == 0 {
				continue
			}
			p := shape.Plot{Title: fmt.Sprintf("%s, %s", chart, where), XLabel: "message size (octets)", YLabel: "Mbit/s", YMin: shape.Ptr(0)}
			for i, l := range ls {
				line := shape.Line{Label: labels[i], Marks: true}
				for _, pt := range l.points {
					if pt.Seconds > 0 { // measured: a run may stop first
						line.Points = append(line.Points, shape.XY{X: float64(pt.Size), Y: pt.Mbps})
					}
				}
				p.Lines = append(p.Lines, line)
			}
			ch.Plots = append(ch.Plots, p)
		}
		out = append(out, ch)
	}
	return out
}

// pointTable lists every point; the tp4 column only when a point ran
// TP4 (the lower layers' points have no TP4 settings).
func pointTable(pts []*point) shape.Table {
	tp4 := slices.ContainsFunc(pts, func(pt *point) bool { return pt.Checksum != nil })
	t := shape.Table{Title: "top: every point (throughput exactly timed and by the 55 ms BIOS tick; Tsend: the originator's packet-driver load and wire time per frame; copy: the packet driver's loopback copy per message)"}
	t.Columns = []shape.Column{{Name: "level", Doc: "the layer user measured"}, {Name: "where", Doc: "remote: between the two PCs; loopback: in the packet driver's loopback on one PC"},
		{Name: "size", Unit: "B", Doc: "the message's size in octets"}}
	if tp4 {
		t.Columns = append(t.Columns, shape.Column{Name: "tp4", Doc: "the point's TP4 settings: acknowledgement step, credit, checksum"})
	}
	t.Columns = append(t.Columns, shape.Column{Name: "exact", Unit: "Mbit/s", Doc: "throughput of the useful bytes, exactly timed from the first message sent to the reply to the last"},
		shape.Column{Name: "by tick", Unit: "Mbit/s", Doc: "the same throughput timed as the study timed it, by the 55 ms BIOS tick"},
		shape.Column{Name: "time", Unit: "s", Doc: "from the first message sent to the reply to the last"},
		shape.Column{Name: "ticks", Doc: "BIOS ticks counted in that time"},
		shape.Column{Name: "Tsend", Unit: "us", Doc: "remote points: the originator's packet-driver load and wire time per frame (\"-\" in loopback)"},
		shape.Column{Name: "copy", Unit: "us", Doc: "loopback points: the packet driver's loopback copy per message (\"-\" remote)"},
		shape.Column{Name: "cases", Doc: "the workload's cases this point serves"})
	for _, pt := range pts {
		tp := "-"
		if pt.Checksum != nil {
			ck := "checksum"
			if !*pt.Checksum {
				ck = "no checksum"
			}
			tp = fmt.Sprintf("ack %d, credit %d, %s", pt.AckStep, pt.Credit, ck)
		}
		us := func(v float64) string {
			if v == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f", v)
		}
		cases := pt.Cases[0]
		for _, c := range pt.Cases[1:] {
			cases += "; " + c
		}
		if pt.Lost > 0 {
			cases += fmt.Sprintf(" (%d messages lost: the recipient's buffers overran)", pt.Lost)
		}
		if pt.Error != "" {
			cases += " (" + pt.Error + ")"
		}
		secs := "-"
		if pt.Seconds > 0 {
			secs = fmt.Sprintf("%.3f", pt.Seconds)
		}
		row := []string{pt.Level, pt.Where, fmt.Sprint(pt.Size)}
		if tp4 {
			row = append(row, tp)
		}
		t.Rows = append(t.Rows, append(row, mbps(pt, pt.Mbps), mbps(pt, pt.TickMbps),
			secs, fmt.Sprint(pt.Ticks), us(pt.TsendUS), us(pt.CopyUS), cases))
	}
	return t
}

// mbps formats a throughput of point pt: "-" when pt was not measured
// (a run that stopped before it).
func mbps(pt *point, v float64) string {
	if pt.Seconds <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

var endNames = [2]string{"originator", "recipient"}

// splits returns, for each split case's levels, where the level's own
// layer's processing goes at each end: a table against size, pies at
// the split sizes, and charts of the categories' shares against size, one
// for each end, a plot per level.
func (b *bench) splits() ([]shape.Table, []shape.Split, []shape.Chart) {
	var tables []shape.Table
	var pies []shape.Split
	charts := map[string]*shape.Chart{}
	var order []string
	chart := func(who string) *shape.Chart {
		if ch, ok := charts[who]; ok {
			return ch
		}
		ch := &shape.Chart{Name: "shares-" + who, Caption: fmt.Sprintf("Each category's share of a layer's processing against message size, at the %s, a plot per layer user of each split case: where the layer's time goes, as the TOP study's Figure 12 shows it for TP4's checksum.", who)}
		charts[who] = ch
		order = append(order, who)
		return ch
	}
	for _, l := range b.lines {
		c := b.p.Cases[l.c]
		if !c.Split || l.where == Loopback && c.Remote {
			continue
		}
		layer := layerOf(l.lv)
		ends := 2
		if l.where == Loopback {
			ends = 1
		}
		for end := range ends {
			who := endNames[end]
			if ends == 1 {
				who = "host"
			}
			t := shape.Table{Title: fmt.Sprintf("%s, %s: %s processing of the %v user at the %s (cycles per message, and each category's share)", c.Name, l.where, layer, l.lv, who),
				Columns: []shape.Column{{Name: "size", Unit: "B"}, {Name: "total", Unit: "cycles", Doc: "the layer's processing cycles per message"}}}
			for _, cat := range osi.Categories {
				t.Columns = append(t.Columns, shape.Column{Name: cat.String(), Unit: "%", Group: "share of the total"})
			}
			plot := shape.Plot{Title: fmt.Sprintf("%v user: %s (%s)", l.lv, layer, c.Name), XLabel: "message size (octets)", YLabel: "share (%)", YMin: shape.Ptr(0), YMax: shape.Ptr(100)}
			// Every category, so that each has its colour in every plot.
			lines := make([]shape.Line, len(osi.Categories))
			for k, cat := range osi.Categories {
				lines[k] = shape.Line{Label: cat.String(), Marks: true}
			}
			for _, pt := range l.points {
				ls, ok := pt.split(end, layer)
				if !ok {
					continue
				}
				row := []string{fmt.Sprint(pt.Size), fmt.Sprintf("%.0f", ls.Cycles)}
				for k, cat := range ls.Categories {
					share := 0.0
					if ls.Cycles > 0 {
						share = 100 * cat.Cycles / ls.Cycles
					}
					row = append(row, fmt.Sprintf("%.1f", share))
					lines[k].Points = append(lines[k].Points, shape.XY{X: float64(pt.Size), Y: share})
				}
				t.Rows = append(t.Rows, row)
				if slices.Contains(b.p.SplitSizes, pt.Size) {
					s := shape.Split{Title: fmt.Sprintf("%v user: %s at the %s, %d B (%s, %s)", l.lv, layer, who, pt.Size, c.Name, l.where), Unit: "cycles per message"}
					for _, cat := range ls.Categories {
						s.Categories = append(s.Categories, shape.Category{Name: cat.Name, Value: cat.Cycles})
					}
					pies = append(pies, s)
				}
			}
			tables = append(tables, t)
			plot.Lines = lines
			ch := chart(who)
			ch.Plots = append(ch.Plots, plot)
		}
	}
	var out []shape.Chart
	for _, who := range order {
		out = append(out, *charts[who])
	}
	return tables, pies, out
}
