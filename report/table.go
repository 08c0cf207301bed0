package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"simkron/sim"
)

// table is one table of a report, rendered as text (the summary and the
// table format) or as HTML.
type table struct {
	title  string
	header []string
	rows   [][]string
	prose  bool // columns of words: aligned left in text
}

// writeText writes the title, then the table with right-aligned columns.
func (t table) writeText(ew *errWriter) {
	ew.printf("%s\n", t.title)
	align := tabwriter.AlignRight
	if t.prose {
		align = 0
	}
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', align)
	fmt.Fprintln(tw, strings.Join(t.header, "\t")+"\t")
	for _, row := range t.rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
}

// WriteTable writes r's measurements as text tables: the memory
// benchmark, the MAC-level frames and the UDP sweep when present, each
// protocol's cycles split by layer (rows message sizes, columns layers,
// values mean cycles) for send and for receive.
func WriteTable(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	writeHeading(ew, r)
	ts := workloadTables(r)
	if len(ts) == 0 {
		ew.printf("\nno measurements to tabulate (workload %q)\n", r.Workload)
	}
	for _, t := range ts {
		ew.printf("\n")
		t.writeText(ew)
	}
	return ew.err
}

// writeHeading writes what ran and whether it completed.
func writeHeading(ew *errWriter, r *Result) {
	ew.printf("simkron %s  experiment %q  seed %d  %s\n", r.Version, r.Experiment, r.Seed, status(r))
	if r.Description != "" {
		ew.printf("%s\n", r.Description)
	}
}

// status says whether the run completed, and if not why.
func status(r *Result) string {
	if r.Complete {
		return "complete"
	}
	return "INCOMPLETE: " + r.Incomplete
}

// workloadTables returns the tables of the workload's measurements.
func workloadTables(r *Result) []table {
	ts := membenchTables(r)
	bs := breakdowns(r)
	if len(r.Mac) > 0 {
		ts = append(ts, macTable(r))
	}
	ts = append(ts, layerTables(bs, "MAC")...)
	if len(r.TTCP) > 0 {
		ts = append(ts, ttcpTables(r)...)
	}
	sws := sweeps(r)
	for _, sw := range sws {
		ts = append(ts, sweepTable(sw))
		ts = append(ts, layerTables(bs, sw.protocol)...)
	}
	if len(sws) == 2 {
		ts = append(ts, besideTable(sws[0], sws[1]))
	}
	return ts
}

// layerTables returns a table of cycles by layer for each of protocol's
// breakdowns: a column per layer in the fixed order, and the total.
func layerTables(bs []breakdown, protocol string) []table {
	var ts []table
	for _, b := range bs {
		if b.protocol != protocol {
			continue
		}
		layers := b.layers()
		t := table{
			title:  fmt.Sprintf("%s %s by layer (mean cycles per %s: %s)", b.protocol, b.direction, b.unit, b.what),
			header: append(append([]string{b.sizeName}, layers...), "total"),
		}
		for _, p := range b.points {
			row := []string{fmt.Sprint(p.size)}
			var total float64
			for _, l := range layers {
				c := p.cycles(l)
				total += c
				row = append(row, fmt.Sprintf("%.0f", c))
			}
			t.rows = append(t.rows, append(row, fmt.Sprintf("%.0f", total)))
		}
		ts = append(ts, t)
	}
	return ts
}

func sweepTable(sw sweep) table {
	packets := "frags"
	if sw.protocol == "TCP" {
		packets = "segs"
	}
	t := table{
		title: fmt.Sprintf("%s echo sweep (cycles; send = inside %s(), receive = first frame at the card to %s() returning; both hosts)", sw.protocol, sw.send, sw.recv),
		header: []string{"size", packets, "msgs", "lost", "corrupt", "rtt us",
			"send mean", "min", "median", "max", "recv mean", "min", "median", "max"},
	}
	for _, u := range sw.rows {
		t.rows = append(t.rows, []string{
			fmt.Sprint(u.Size), fmt.Sprint(u.Packets), fmt.Sprint(u.Messages), fmt.Sprint(u.Lost), fmt.Sprint(u.Corrupt),
			fmt.Sprintf("%.1f", u.RTTMicros),
			fmt.Sprintf("%.0f", u.Send.Mean), fmt.Sprintf("%.0f", u.Send.Min), fmt.Sprintf("%.0f", u.Send.Median), fmt.Sprintf("%.0f", u.Send.Max),
			fmt.Sprintf("%.0f", u.Receive.Mean), fmt.Sprintf("%.0f", u.Receive.Min), fmt.Sprintf("%.0f", u.Receive.Median), fmt.Sprintf("%.0f", u.Receive.Max),
		})
	}
	return t
}

// besideTable sets two sweeps' median latencies and round trips side by
// side, for the sizes both measured.
func besideTable(a, b sweep) table {
	t := table{
		title: fmt.Sprintf("%s beside %s (median cycles; round trip in us)", b.protocol, a.protocol),
		header: []string{"size",
			a.protocol + " send", b.protocol + " send", a.protocol + " recv", b.protocol + " recv",
			a.protocol + " rtt", b.protocol + " rtt"},
	}
	for _, x := range a.rows {
		for _, y := range b.rows {
			if x.Size != y.Size {
				continue
			}
			t.rows = append(t.rows, []string{fmt.Sprint(x.Size),
				fmt.Sprintf("%.0f", x.Send.Median), fmt.Sprintf("%.0f", y.Send.Median),
				fmt.Sprintf("%.0f", x.Receive.Median), fmt.Sprintf("%.0f", y.Receive.Median),
				fmt.Sprintf("%.1f", x.RTTMicros), fmt.Sprintf("%.1f", y.RTTMicros)})
		}
	}
	return t
}

func macTable(r *Result) table {
	t := table{
		title:  "MAC-level frames (payload bytes; throughput of payload; tx time = loading the card to transmit done)",
		header: []string{"payload", "sent", "received", "corrupt", "Mbit/s", "frames/s", "tx time us", "wire time us"},
	}
	for _, m := range r.Mac {
		t.rows = append(t.rows, []string{
			fmt.Sprint(m.Size), fmt.Sprint(m.Sent), fmt.Sprint(m.Received), fmt.Sprint(m.Corrupt),
			fmt.Sprintf("%.3f", m.ThroughputMbps), fmt.Sprintf("%.1f", m.FramesPerSec),
			fmt.Sprintf("%.1f", m.TxTimeUS), fmt.Sprintf("%.1f", m.WireTimeUS),
		})
	}
	return t
}

// membenchTables returns a table per host and routine, in the result's
// order.
func membenchTables(r *Result) []table {
	type key struct{ host, op string }
	var order []key
	for _, row := range r.Membench {
		k := key{row.Host, row.Op}
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	var ts []table
	for _, k := range order {
		t := table{
			title:  fmt.Sprintf("membench %s on %s (warm passes; misses per pass)", k.op, k.host),
			header: []string{"size", "cold cycles", "warm cycles", "cycles/byte"},
		}
		first := true
		for _, row := range r.Membench {
			if row.Host != k.host || row.Op != k.op {
				continue
			}
			if first {
				for _, l := range row.Levels {
					t.header = append(t.header, l.Name+" misses")
				}
				first = false
			}
			line := []string{sim.Size(row.Size).String(), fmt.Sprint(row.ColdCycles),
				fmt.Sprintf("%.0f", row.WarmCycles), fmt.Sprintf("%.3f", row.CyclesPerByte)}
			for _, l := range row.Levels {
				line = append(line, fmt.Sprintf("%.1f", l.Misses))
			}
			t.rows = append(t.rows, line)
		}
		ts = append(ts, t)
	}
	return ts
}

// ttcpTables returns the ttcp runs side by side, then each run's verdict
// and a window of its trace from the middle of the transfer.
func ttcpTables(r *Result) []table {
	t := table{
		title: "ttcp runs (throughput at the receiver, accept to end of stream; gaps between data segments at the receiver's card)",
		header: []string{"run", "mtu", "mss", "writes", "size", "sndbuf", "rcvbuf", "nodelay", "delack",
			"KB/s", "Mbit/s", "seconds", "segs", "sizes", "gap median ms", "gap max ms", "stalls", "held", "delack acks", "rexmt"},
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	for _, c := range r.TTCP {
		var sizes []string
		for _, sc := range c.Sizes[:min(len(c.Sizes), 3)] {
			sizes = append(sizes, fmt.Sprintf("%dx%d", sc.Count, sc.Bytes))
		}
		t.rows = append(t.rows, []string{c.Name, fmt.Sprint(c.IfMTU), fmt.Sprint(c.MSS), fmt.Sprint(c.Writes), fmt.Sprint(c.Size),
			bufText(c.SndBuf), bufText(c.RcvBuf), onOff(c.NoDelay), onOff(!c.QuickAck),
			fmt.Sprintf("%.1f", c.KBps), fmt.Sprintf("%.3f", c.Mbps), fmt.Sprintf("%.3f", c.Seconds), fmt.Sprint(c.DataSegments),
			strings.Join(sizes, " "), fmt.Sprintf("%.2f", c.Gaps.MedianMS), fmt.Sprintf("%.1f", c.Gaps.MaxMS), fmt.Sprint(c.Gaps.Stalls),
			fmt.Sprint(c.Held), fmt.Sprint(c.DelAckTimeouts), fmt.Sprint(c.Retransmits)})
	}
	ts := []table{t}
	v := table{title: "ttcp verdicts (from the measurements above)", header: []string{"run", "verdict"}, prose: true}
	w := table{title: "ttcp: why (the BSD sender and receiver rules applied to each run)", header: []string{"run", "mechanism"}, prose: true}
	for _, c := range r.TTCP {
		v.rows = append(v.rows, []string{c.Name, c.Verdict})
		w.rows = append(w.rows, []string{c.Name, c.Why})
	}
	ts = append(ts, v, w)
	for _, c := range r.TTCP {
		if len(c.Pattern) == 0 {
			continue
		}
		p := table{
			title:  fmt.Sprintf("ttcp %s: segments from the middle of the transfer as they reach the cards (seq and ack relative to each side's initial sequence number)", c.Name),
			header: []string{"time ms", "delta ms", "dir", "seq", "len", "ack", "win"},
		}
		for _, e := range c.Pattern {
			p.rows = append(p.rows, []string{fmt.Sprintf("%.3f", e.TimeMS), fmt.Sprintf("%.3f", e.DeltaMS), e.Dir,
				fmt.Sprint(e.Seq), fmt.Sprint(e.Len), fmt.Sprint(e.Ack), fmt.Sprint(e.Win)})
		}
		ts = append(ts, p)
	}
	return ts
}

// bufText writes a socket buffer size, "default" for the stack's.
func bufText(s sim.Size) string {
	if s == 0 {
		return "default"
	}
	return fmt.Sprint(int64(s))
}
