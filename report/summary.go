package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"simkron/sim"
)

// WriteSummary writes the text summary of r: what ran, each host's
// figures, and the workload's table.
func WriteSummary(w io.Writer, r *Result) error {
	ew := &errWriter{w: w}
	ew.printf("simkron %s  experiment %q  seed %d\n", r.Version, r.Experiment, r.Seed)
	if r.Description != "" {
		ew.printf("%s\n", r.Description)
	}
	switch r.Detail {
	case "":
	case "functional":
		ew.printf("detail: functional (no cache model: every reference costs a calibrated average; no cache counters)\n")
	default:
		ew.printf("detail: %s\n", r.Detail)
	}
	ew.printf("simulated %v in %d events, %s\n", sim.Time(r.SimTimePS), r.Events, status(r))
	if r.Nondeterministic != "" {
		ew.printf("non-deterministic: %s\n", r.Nondeterministic)
	}
	if len(r.NonFinite) > 0 {
		ew.printf("not finite (null in result.json): %s\n", strings.Join(r.NonFinite, ", "))
	}
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
		if len(h.Caches) > 0 {
			ew.printf("  memory: %s, %d pages touched, %d line reads, %d writes\n", sim.Size(h.Memory.Size), h.Memory.PagesTouched, h.Memory.Reads, h.Memory.Writes)
		} else {
			// No cache model, so no line traffic to count.
			ew.printf("  memory: %s, %d pages touched\n", sim.Size(h.Memory.Size), h.Memory.PagesTouched)
		}
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
		writeBridges(ew, r, sg.Name)
	}
	if r.Realtime != nil {
		writeRealtime(ew, r.Realtime)
	}
	writeFigures(ew, r)
	if a := r.Annotations; a != nil {
		writeAnnotations(ew, a)
	}
	return ew.err
}

func writeAnnotations(ew *errWriter, a *Annotations) {
	ew.printf("\nannotations: %s\n", strings.Join(a.Scripts, ", "))
	if a.Error != "" {
		ew.printf("  SCRIPT ERROR: %s\n", a.Error)
	}
	if len(a.Buckets) > 0 {
		tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "bucket\tcount\tmean\tmin\tp50\tp90\tp99\tmax\t")
		for _, b := range a.Buckets {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t\n", b.Name, b.Count, b.Mean, b.Min, b.P50, b.P90, b.P99, b.Max)
		}
		tw.Flush()
	}
	if a.Output != "" {
		ew.printf("%s", a.Output)
		if !strings.HasSuffix(a.Output, "\n") {
			ew.printf("\n")
		}
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
