package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"simkron/sim"
)

// WriteSummary writes the text summary of r: what ran, each host's
// figures, and the workload's table.
func WriteSummary(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	status := "complete"
	if !r.Complete {
		status = "INCOMPLETE: " + r.Incomplete
	}
	ew.printf("simkron %s  experiment %q  seed %d\n", r.Version, r.Experiment, r.Seed)
	if r.Description != "" {
		ew.printf("%s\n", r.Description)
	}
	ew.printf("simulated %v in %d events, %s\n", sim.Time(r.SimTimePS), r.Events, status)
	for _, h := range r.Hosts {
		ew.printf("\nhost %s: %s (%s)\n", h.Name, h.Machine, sim.Frequency(h.ClockHz))
		if h.Description != "" {
			ew.printf("  %s\n", h.Description)
		}
		busy := h.CPU.Cycles - h.CPU.IdleCycles
		ew.printf("  cpu: %d cycles, %d busy (%.1f%%), %d instructions, %d interrupts, %d context switches\n",
			h.CPU.Cycles, busy, pct(busy, h.CPU.Cycles), h.CPU.Instructions, h.CPU.Interrupts, h.CPU.Switches)
		for _, c := range h.Caches {
			acc := c.ReadHits + c.ReadMisses + c.WriteHits + c.WriteMisses + c.FetchHits + c.FetchMisses
			miss := c.ReadMisses + c.WriteMisses + c.FetchMisses
			ew.printf("  %s: %s %d-way %dB lines %s: %d references, %d misses (%.2f%%), %d write-backs\n",
				c.Name, sim.Size(c.Size), c.Assoc, c.Line, c.WritePolicy, acc, miss, pct(int64(miss), int64(acc)), c.Writebacks)
		}
		ew.printf("  memory: %s, %d pages touched, %d line reads, %d writes\n", sim.Size(h.Memory.Size), h.Memory.PagesTouched, h.Memory.Reads, h.Memory.Writes)
		ew.printf("  kernel: %d system calls, %d ticks, %d timers fired, heap peak %s\n", h.Kernel.Syscalls, h.Kernel.Ticks, h.Kernel.TimersFired, sim.Size(h.Kernel.HeapPeak))
		for _, d := range h.Devices {
			var cs []string
			for _, c := range d.Counters {
				cs = append(cs, fmt.Sprintf("%s %d", c.Name, c.Value))
			}
			ew.printf("  device %s at %s 0x%x+0x%x %s\n", d.Name, d.Space, d.Base, d.Size, strings.Join(cs, ", "))
		}
		if h.GuestErrors > 0 {
			ew.printf("  GUEST ERRORS: %d\n", h.GuestErrors)
			for _, g := range h.GuestLog {
				ew.printf("    %s\n", g)
			}
		}
	}
	for _, sg := range r.Segments {
		busy := pct(sg.BusyPS, r.SimTimePS)
		ew.printf("\nsegment %s: %s %s, %d frames, %d bytes, %d collisions, busy %.1f%% of the run\n",
			sg.Name, sim.BitRate(sg.Rate), sg.Mode, sg.Frames, sg.Bytes, sg.Collisions, busy)
	}
	if len(r.Membench) > 0 {
		ew.printf("\n")
		writeMembench(ew, r)
	}
	if len(r.Mac) > 0 {
		ew.printf("\n")
		writeMac(ew, r)
	}
	if len(r.UDP) > 0 {
		ew.printf("\n")
		writeUDP(ew, r)
	}
	if p := r.Ping; p != nil {
		ew.printf("\nPING %s -> %s: %d data bytes\n", p.From, p.To, p.Size)
		for _, rp := range p.Replies {
			if rp.OK {
				ew.printf("  icmp_seq=%d time=%.1f us\n", rp.Seq, rp.RTTMicro)
			} else {
				ew.printf("  icmp_seq=%d no reply\n", rp.Seq)
			}
		}
		ew.printf("  %d sent, %d received, %d bad; rtt min/avg/max = %.1f/%.1f/%.1f us\n",
			p.Sent, p.Received, p.Bad, p.MinRTTMicro, p.AvgRTTMicro, p.MaxRTTMicro)
	}
	return ew.err
}

func writeUDP(ew *errWriter, r *Result) {
	ew.printf("UDP echo sweep (cycles; send = inside sendto(), receive = last frame at the card to recvfrom() returning; both hosts)\n")
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tfrags\tmsgs\tlost\tcorrupt\trtt us\tsend mean\tmin\tmedian\tmax\trecv mean\tmin\tmedian\tmax\t")
	for _, u := range r.UDP {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			u.Size, u.Fragments, u.Messages, u.Lost, u.Corrupt, u.RTTMicros,
			u.Send.Mean, u.Send.Min, u.Send.Median, u.Send.Max,
			u.Receive.Mean, u.Receive.Min, u.Receive.Median, u.Receive.Max)
	}
	tw.Flush()
	for _, side := range []string{"send", "receive"} {
		what := "the sending thread's cycles inside sendto"
		if side == "receive" {
			what = "all of the receiving host's cycles from the first frame's arrival to recvfrom returning"
		}
		rows := make([]layerRow, len(r.UDP))
		for i, u := range r.UDP {
			ls := u.SendLayers
			if side == "receive" {
				ls = u.RecvLayers
			}
			rows[i] = layerRow{size: u.Size, cycles: map[string]float64{}}
			for _, l := range ls {
				rows[i].cycles[l.Layer] = l.Cycles
			}
		}
		writeLayers(ew, fmt.Sprintf("%s work by layer (mean cycles per message: %s)", side, what), "size", rows)
	}
}

// layerRow is one line of a table of cycles by layer.
type layerRow struct {
	size   int
	cycles map[string]float64
}

// writeLayers writes a table with a column per layer (sorted) and a
// total; nothing when no row has a layer.
func writeLayers(ew *errWriter, title, first string, rows []layerRow) {
	seen := map[string]bool{}
	var order []string
	for _, r := range rows {
		for l := range r.cycles {
			if !seen[l] {
				seen[l] = true
				order = append(order, l)
			}
		}
	}
	if len(order) == 0 {
		return
	}
	sort.Strings(order)
	ew.printf("\n%s\n", title)
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, first+"\t"+strings.Join(order, "\t")+"\ttotal\t")
	for _, r := range rows {
		var total float64
		line := fmt.Sprintf("%d", r.size)
		for _, l := range order {
			line += fmt.Sprintf("\t%.0f", r.cycles[l])
			total += r.cycles[l]
		}
		fmt.Fprintf(tw, "%s\t%.0f\t\n", line, total)
	}
	tw.Flush()
}

func writeMac(ew *errWriter, r *Result) {
	ew.printf("MAC-level frames (payload bytes; throughput of payload; tx time = loading the card to transmit done)\n")
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "payload\tsent\treceived\tcorrupt\tMbit/s\tframes/s\ttx time us\twire time us\t")
	for _, m := range r.Mac {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.3f\t%.1f\t%.1f\t%.1f\t\n", m.Size, m.Sent, m.Received, m.Corrupt, m.ThroughputMbps, m.FramesPerSec, m.TxTimeUS, m.WireTimeUS)
	}
	tw.Flush()
	for _, side := range []string{"send", "receive"} {
		rows := make([]layerRow, len(r.Mac))
		for i, m := range r.Mac {
			ls := m.Send
			if side == "receive" {
				ls = m.Receive
			}
			rows[i] = layerRow{size: m.Size, cycles: map[string]float64{}}
			for _, l := range ls {
				rows[i].cycles[l.Layer] = l.CyclesPerFrame
			}
		}
		writeLayers(ew, fmt.Sprintf("cycles per frame on the %s side, by layer", side), "payload", rows)
	}
}

func writeMembench(ew *errWriter, r *Result) {
	type key struct{ host, op string }
	var order []key
	seen := map[key]bool{}
	for _, row := range r.Membench {
		k := key{row.Host, row.Op}
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	for _, k := range order {
		ew.printf("membench %s on %s (warm passes; misses per pass)\n", k.op, k.host)
		tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
		header := "size\tcold cycles\twarm cycles\tcycles/byte"
		var levels []string
		for _, row := range r.Membench {
			if row.Host == k.host && row.Op == k.op {
				for _, l := range row.Levels {
					levels = append(levels, l.Name)
				}
				break
			}
		}
		for _, l := range levels {
			header += "\t" + l + " misses"
		}
		fmt.Fprintln(tw, header+"\t")
		for _, row := range r.Membench {
			if row.Host != k.host || row.Op != k.op {
				continue
			}
			line := fmt.Sprintf("%s\t%d\t%.0f\t%.3f", sim.Size(row.Size), row.ColdCycles, row.WarmCycles, row.CyclesPerByte)
			for _, l := range row.Levels {
				line += fmt.Sprintf("\t%.1f", l.Misses)
			}
			fmt.Fprintln(tw, line+"\t")
		}
		tw.Flush()
		ew.printf("\n")
	}
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
