package latency

import (
	"fmt"
	"slices"
	"strings"

	"simkron/report/shape"
	"simkron/workload"
)

// What a workload that compares transports on the same hosts needs: the
// built-in sweeps by name, a way to run several in turn, and the tables
// and chart that set their results side by side.

// sendWhat says what the send latency counts, for titles.
func (s *Sweep) sendWhat() string {
	if s.p.hostSpan() {
		return "all of the sending host's cycles from " + s.info.Send + "'s entry to its return"
	}
	return "the sending thread's cycles inside " + s.info.Send
}

// Name returns the sweep's name in lower case ("udp"): its result
// section's name and the prefix of its threads' names.
func (s *Sweep) Name() string { return s.name() }

// Info returns the description of the sweep's transport.
func (s *Sweep) Info() Info { return s.info }

// SweepOf prepares the sweep of the built-in workload called name ("udp"
// or "tcp") between client and server, with that workload's settings
// ([workload.NAME], its defaults when the file has none) but these hosts,
// for a workload that runs it before its own on the same hosts.
func SweepOf(env workload.Env, name, client, server string) (*Sweep, error) {
	switch name {
	case "udp":
		u := *env.Params("udp").(*UDPParams)
		u.Client, u.Server = client, server
		return newUDP(env, u)
	case "tcp":
		p := *env.Params("tcp").(*TCPParams)
		p.Client, p.Server = client, server
		hs, err := Pair(env, [2]string{"client", "server"}, [2]string{client, server})
		if err != nil {
			return nil, err
		}
		return newSweep(p.Params, TCP{p}, compat{}, hs[0], hs[1])
	}
	return nil, fmt.Errorf("%q is not a sweep (udp, tcp)", name)
}

// InTurn returns a workload that runs the sweeps between the same two
// hosts one after another, each client in turn on one thread of the
// client host (each server on a thread of its own from the start), and
// reports each sweep's section, tables and breakdowns in that order.
func InTurn(runs ...*Sweep) workload.Workload { return &sweeps{runs: runs, oneThread: true} }

// MedianTable sets the medians by layer of several sweeps side by side in
// one direction (shape.Send, shape.Receive or DirBusy): a row per size
// and sweep, a column per layer any of them has, in stack order, and the
// median total.
func MedianTable(dir string, runs ...*Sweep) shape.Table {
	meds := make([][][]LayerCost, len(runs))
	tots := make([][]float64, len(runs))
	var layers []string
	for i, s := range runs {
		meds[i], tots[i] = s.LayerMedians(dir)
		for _, row := range meds[i] {
			for _, l := range row {
				if !slices.Contains(layers, l.Layer) {
					layers = append(layers, l.Layer)
				}
			}
		}
	}
	shape.SortLayers(layers)
	var calls []string
	for _, s := range runs {
		calls = append(calls, s.info.Send)
	}
	what := "send: the sending thread's cycles inside the call (" + strings.Join(calls, ", ") + ")"
	if runs[0].p.hostSpan() {
		what = "send: all of the sending host's cycles from the call's entry to its return (" + strings.Join(calls, ", ") + "), idle as DMA"
	}
	switch dir {
	case shape.Receive:
		what = "receive: the receiving host's cycles from the first frame's arrival to the receive call returning, the wait for the wire and the card as DMA"
	case DirBusy:
		what = "receive, host busy cycles only: the same span without the cycles the host was idle"
	}
	t := shape.Table{
		Title:   fmt.Sprintf("Latency by layer, median cycles per message (%s; each layer's median, and the median total, which they need not add up to)", what),
		Columns: shape.Cols(append(append([]string{"size", "protocol"}, layers...), "total")...),
	}
	for si, size := range runs[0].p.Sizes {
		for i, s := range runs {
			if si >= len(meds[i]) {
				continue
			}
			row := []string{fmt.Sprint(size), s.info.Name}
			for _, l := range layers {
				var c float64
				for _, lc := range meds[i][si] {
					if lc.Layer == l {
						c = lc.Cycles
					}
				}
				row = append(row, fmt.Sprintf("%.0f", c))
			}
			t.Rows = append(t.Rows, append(row, fmt.Sprintf("%.0f", tots[i][si])))
		}
	}
	return t
}

// metric is a latency the factors compare: the median of a row's send,
// receive or busy receive.
type metric struct {
	name string
	get  func(r Row) (float64, bool)
}

var metrics = []metric{
	{"send", func(r Row) (float64, bool) { return r.Send.Median, r.Send.N > 0 }},
	{"receive", func(r Row) (float64, bool) { return r.Receive.Median, r.Receive.N > 0 }},
	{"receive busy", func(r Row) (float64, bool) {
		if r.ReceiveBusy == nil {
			return 0, false
		}
		return r.ReceiveBusy.Median, r.ReceiveBusy.N > 0
	}},
}

// Factors returns the improvement factors of base over each of others:
// per size, the other's median latency divided by base's (send, receive,
// and the busy receive when both measured it), and their mean over the
// sizes up to split bytes (below the MTU) and over those above it.
func Factors(split int, base *Sweep, others ...*Sweep) (perSize, summary shape.Table) {
	bn := base.info.Name
	perSize = shape.Table{Title: fmt.Sprintf("Improvement factors of %s per size (the other protocol's median latency / %s's)", bn, bn)}
	perSize.Columns = shape.Cols("size")
	summary = shape.Table{
		Title:   fmt.Sprintf("Improvement factors of %s (mean over the sizes of the other protocol's median latency / %s's), below and above the MTU", bn, bn),
		Columns: []shape.Column{{Name: "latency"}, {Name: "over"}, {Name: fmt.Sprintf("<= %d B", split)}, {Name: fmt.Sprintf("> %d B", split)}},
		Prose:   true,
	}
	type col struct {
		m     metric
		other *Sweep
	}
	var cols []col
	for _, m := range metrics {
		for _, o := range others {
			if !has(base, m) || !has(o, m) {
				continue
			}
			cols = append(cols, col{m, o})
			perSize.Columns = append(perSize.Columns, shape.Column{Name: fmt.Sprintf("%s/%s %s", o.info.Name, bn, m.name)})
		}
	}
	below, above := make([]float64, len(cols)), make([]float64, len(cols))
	var nb, na int
	for _, br := range base.rows {
		row := []string{fmt.Sprint(br.Size)}
		ok := true
		fs := make([]float64, len(cols))
		for i, c := range cols {
			or, found := rowOf(c.other, br.Size)
			b, bok := c.m.get(br)
			v, vok := c.m.get(or)
			if !found || !bok || !vok || b == 0 {
				ok = false
				row = append(row, "-")
				continue
			}
			fs[i] = v / b
			row = append(row, fmt.Sprintf("%.2f", fs[i]))
		}
		perSize.Rows = append(perSize.Rows, row)
		if !ok {
			continue
		}
		for i := range cols {
			if br.Size <= split {
				below[i] += fs[i]
			} else {
				above[i] += fs[i]
			}
		}
		if br.Size <= split {
			nb++
		} else {
			na++
		}
	}
	mean := func(sum float64, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", sum/float64(n))
	}
	for i, c := range cols {
		summary.Rows = append(summary.Rows, []string{c.m.name, c.other.info.Name, mean(below[i], nb), mean(above[i], na)})
	}
	return perSize, summary
}

// has reports whether s measured metric m at any size.
func has(s *Sweep, m metric) bool {
	for _, r := range s.rows {
		if _, ok := m.get(r); ok {
			return true
		}
	}
	return false
}

func rowOf(s *Sweep, size int) (Row, bool) {
	for _, r := range s.rows {
		if r.Size == size {
			return r, true
		}
	}
	return Row{}, false
}

// MedianChart draws the sweeps' median latencies against message size:
// one plot per direction (send, receive, and the busy receive when
// measured), a line per sweep.
func MedianChart(name string, runs ...*Sweep) shape.Chart {
	ch := shape.Chart{Name: name, Caption: "Median latency in cycles against message size, per protocol: send, receive with the wait for the wire, and receive as the host's busy cycles only."}
	for _, m := range metrics {
		p := shape.Plot{Title: m.name, XLabel: "message size (bytes, log scale)", YLabel: "median cycles", XLog: true, YMin: shape.Ptr(0)}
		for _, s := range runs {
			if !has(s, m) {
				continue
			}
			l := shape.Line{Label: s.info.Name, Marks: true}
			for _, r := range s.rows {
				if v, ok := m.get(r); ok {
					l.Points = append(l.Points, shape.XY{X: float64(r.Size), Y: v})
				}
			}
			p.Lines = append(p.Lines, l)
		}
		if len(p.Lines) > 0 {
			ch.Plots = append(ch.Plots, p)
		}
	}
	return ch
}

// Index returns the schedule index a message's stamp (its first four
// bytes, big-endian) names, -1 when it names none: for a transport's
// Tracker that reads the stamp.
func (s *Sweep) Index(stamp uint32) int { return s.index(stamp) }
