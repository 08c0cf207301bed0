package ttcp

import (
	"fmt"
	"strings"

	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "ttcp",
		Help:   "ttcp bulk transfers, one connection per [[workload.ttcp.case]]: throughput, segment gaps and why",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			p := params.(*Params)
			return []workload.HostRef{{Key: "transmitter", Name: p.Transmitter}, {Key: "receiver", Name: p.Receiver, Peer: "transmitter", Route: true}}
		},
		New: func(env workload.Env, params any) (workload.Workload, error) {
			p := *params.(*Params)
			hs, err := latency.Pair(env, [2]string{"transmitter", "receiver"}, [2]string{p.Transmitter, p.Receiver})
			if err != nil {
				return nil, err
			}
			return New(p, hs[0], hs[1])
		},
		// The transmitter's program and the receiver's share nothing
		// while they run (Test): each host is a group of its own.
		Groups: func(params any, _ []string) [][]string {
			p := params.(*Params)
			return [][]string{{p.Transmitter}, {p.Receiver}}
		},
	})
}

// Result returns the runs' outcomes, their tables and each run's
// time-sequence graph.
func (t *Test) Result() (workload.Result, error) {
	rs := t.results()
	res := workload.Result{
		Sections: []workload.Section{{Name: "ttcp", Value: rs}},
		Figures:  shape.Figures{Tables: tables(rs), Charts: []shape.Chart{progressChart(rs)}},
	}
	for _, c := range rs {
		if c.Error != "" {
			res.Incomplete = fmt.Sprintf("ttcp run %q: %s", c.Name, c.Error)
			break
		}
	}
	return res, nil
}

// tables returns the runs side by side, then each run's verdict and a
// window of its trace from the middle of the transfer.
func tables(rs []Result) []shape.Table {
	t := shape.Table{
		Title: "ttcp runs (throughput at the receiver, accept to end of stream; gaps between data segments at the receiver's card)",
		Columns: []shape.Column{{Name: "run"},
			{Name: "mtu", Doc: "the interface MTU of both hosts"}, {Name: "mss", Doc: "the transmitter's maximum segment size"},
			{Name: "writes", Doc: "write() calls (ttcp -n)"}, {Name: "size", Doc: "bytes per write and per read (ttcp -l)"},
			{Name: "sndbuf", Doc: "the transmitter's SO_SNDBUF in bytes"}, {Name: "rcvbuf", Doc: "the receiver's SO_RCVBUF in bytes"},
			{Name: "nodelay", Doc: "TCP_NODELAY on the transmitter: Nagle off"}, {Name: "delack", Doc: "the receiver's delayed ACKs"},
			{Name: "KB/s", Doc: "the receiver's throughput in 1024-byte KB per second, accept to end of stream"}, {Name: "Mbit/s", Doc: "the same in Mbit/s"},
			{Name: "seconds", Doc: "the receiver's time from accept to the end of the stream"},
			{Name: "segs", Doc: "data segments the receiver's card saw"}, {Name: "sizes", Doc: "the commonest segment sizes: count x bytes"},
			{Name: "gap median", Unit: "ms", Doc: "the median time between consecutive data segments at the receiver's card"},
			{Name: "gap max", Unit: "ms", Doc: "the longest such time"},
			{Name: "stalls", Doc: "gaps of at least half the delayed-ACK period"},
			{Name: "held", Doc: "times the transmitter's TCP held back data its window allowed (Nagle, silly-window avoidance)"},
			{Name: "delack acks", Doc: "ACKs the receiver's delayed-ACK timer sent"},
			{Name: "rexmt", Doc: "segments the transmitter sent again"}},
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	for _, c := range rs {
		var sizes []string
		for _, sc := range c.Sizes[:min(len(c.Sizes), 3)] {
			sizes = append(sizes, fmt.Sprintf("%dx%d", sc.Count, sc.Bytes))
		}
		// A run the simulation stopped before (or during) has no
		// throughput: "-", not 0.
		measured := func(format string, v float64) string {
			if c.Seconds <= 0 {
				return "-"
			}
			return fmt.Sprintf(format, v)
		}
		t.Rows = append(t.Rows, []string{c.Name, fmt.Sprint(c.IfMTU), fmt.Sprint(c.MSS), fmt.Sprint(c.Writes), fmt.Sprint(c.Size),
			bufText(c.SndBuf), bufText(c.RcvBuf), onOff(c.NoDelay), onOff(!c.QuickAck),
			measured("%.1f", c.KBps), measured("%.3f", c.Mbps), measured("%.3f", c.Seconds), fmt.Sprint(c.DataSegments),
			strings.Join(sizes, " "), measured("%.2f", c.Gaps.MedianMS), measured("%.1f", c.Gaps.MaxMS), fmt.Sprint(c.Gaps.Stalls),
			fmt.Sprint(c.Held), fmt.Sprint(c.DelAckTimeouts), fmt.Sprint(c.Retransmits)})
	}
	ts := []shape.Table{t}
	v := shape.Table{Title: "ttcp verdicts (from the measurements above)", Columns: shape.Cols("run", "verdict"), Prose: true}
	w := shape.Table{Title: "ttcp: why (the BSD sender and receiver rules applied to each run)", Columns: shape.Cols("run", "mechanism"), Prose: true}
	for _, c := range rs {
		v.Rows = append(v.Rows, []string{c.Name, c.Verdict})
		w.Rows = append(w.Rows, []string{c.Name, c.Why})
	}
	ts = append(ts, v, w)
	for _, c := range rs {
		if len(c.Pattern) == 0 {
			continue
		}
		p := shape.Table{
			Title: fmt.Sprintf("ttcp %s: segments from the middle of the transfer as they reach the cards (seq and ack relative to each side's initial sequence number)", c.Name),
			Columns: []shape.Column{{Name: "time", Unit: "ms", Doc: "since the run's first data segment"}, {Name: "delta", Unit: "ms", Doc: "since the segment before"},
				{Name: "dir", Doc: "data: transmitter to receiver; ack: back"}, {Name: "seq", Doc: "the sequence number, relative to the sender's initial one"},
				{Name: "len", Doc: "bytes of data"}, {Name: "ack", Doc: "the acknowledgement number, relative to the other side's initial sequence number"},
				{Name: "win", Doc: "the window advertised"}},
		}
		for _, e := range c.Pattern {
			p.Rows = append(p.Rows, []string{fmt.Sprintf("%.3f", e.TimeMS), fmt.Sprintf("%.3f", e.DeltaMS), e.Dir,
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

// progressChart is each run's bytes at the receiver's card against time:
// the whole transfers, and their first second.
func progressChart(rs []Result) shape.Chart {
	ch := shape.Chart{
		Name:    "progress",
		Caption: "Bytes that have reached the receiver's card against time, one line per ttcp run: the whole transfers, and their first second.",
	}
	for _, limit := range []float64{0, 1} {
		p := shape.Plot{
			Title:  "ttcp: bytes at the receiver's card against time",
			XLabel: "seconds since the first data segment",
			YLabel: "bytes",
			XMin:   shape.Ptr(0), YMin: shape.Ptr(0),
		}
		if limit > 0 {
			p.Title = fmt.Sprintf("ttcp: the first %g s", limit)
			p.XMax = shape.Ptr(limit)
		}
		for _, c := range rs {
			l := shape.Line{Label: c.Name, Step: true}
			for _, pt := range c.Progress {
				if limit > 0 && pt.Seconds > limit {
					break
				}
				l.Points = append(l.Points, shape.XY{X: pt.Seconds, Y: float64(pt.Bytes)})
			}
			p.Lines = append(p.Lines, l)
		}
		ch.Plots = append(ch.Plots, p)
	}
	return ch
}
