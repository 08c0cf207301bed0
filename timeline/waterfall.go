package timeline

import (
	"fmt"
	"slices"
	"strings"

	"simkron/report"
	"simkron/sim"
)

// Waterfall returns the trace as a waterfall the report draws: a row per
// host that ran anything in the window, its core's atoms merged by
// layer; a row per network with its frames, after the first host's; and
// under each host, the workload's measurements there.
func (t *Trace) Waterfall() *report.Waterfall {
	w := &report.Waterfall{Title: "the whole run"}
	if t.Window != "" {
		w.Title = t.Window
		if m, ok := strings.CutPrefix(t.Window, "message="); ok {
			w.Title = "message " + m
		}
	}
	first := true
	span := func(from, to int64) {
		if first || from < w.From {
			w.From = from
		}
		if first || to > w.To {
			w.To = to
		}
		first = false
	}
	var hosts []report.WaterfallRow
	for _, h := range t.Hosts {
		row := report.WaterfallRow{Name: h.Name}
		busy := false
		for _, a := range h.Atoms {
			layer := a.Layer
			if layer == Halted {
				layer = report.Halted
			} else {
				busy = true
			}
			n := len(row.Bars)
			if n > 0 && row.Bars[n-1].Layer == layer && row.Bars[n-1].To == a.From {
				last := &row.Bars[n-1]
				last.To = a.To
				if a.Call != "" && !strings.Contains(last.Detail, a.Call) {
					last.Detail += ", " + a.Call
				}
				continue
			}
			detail := layer
			if a.Call != "" {
				detail = fmt.Sprintf("%s: %s", layer, a.Call)
			}
			row.Bars = append(row.Bars, report.WaterfallBar{From: a.From, To: a.To, Layer: layer, Detail: detail})
		}
		if !busy {
			continue
		}
		clock := sim.NewClock(sim.Frequency(h.ClockHz))
		for _, m := range h.Measures {
			if len(m.Pieces) == 0 {
				continue
			}
			from, to := m.Pieces[0].From, m.Pieces[0].To
			for _, p := range m.Pieces {
				from, to = min(from, p.From), max(to, p.To)
			}
			var cycles float64
			for _, v := range m.Layers {
				cycles += v
			}
			row.Spans = append(row.Spans, report.WaterfallSpan{From: int64(clock.Time(from)), To: int64(clock.Time(to)),
				Label: fmt.Sprintf("%s %s cycles", m.Direction, groupDigits(int64(cycles)))})
		}
		span(row.Bars[0].From, row.Bars[len(row.Bars)-1].To)
		hosts = append(hosts, row)
	}
	var nets []report.WaterfallRow
	for _, f := range t.Frames {
		i := slices.IndexFunc(nets, func(r report.WaterfallRow) bool { return r.Name == f.Network })
		if i < 0 {
			i = len(nets)
			nets = append(nets, report.WaterfallRow{Name: f.Network, Wire: true})
		}
		nets[i].Bars = append(nets[i].Bars, report.WaterfallBar{From: f.From, To: f.To, Layer: "wire",
			Label: fmt.Sprintf("%s → %s", f.Sender, f.Receiver), Detail: fmt.Sprintf("%s, %d bytes", f.Name, f.Bytes),
			Sender: f.Sender, Receiver: f.Receiver})
		span(f.From, f.To)
	}
	if len(hosts) > 0 {
		w.Rows = append(w.Rows, hosts[0])
		w.Rows = append(w.Rows, nets...)
		w.Rows = append(w.Rows, hosts[1:]...)
	}
	return w
}

// groupDigits writes n with a comma between groups of three digits.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
