package timeline

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"simkron/workload"
)

// Summing a host's atoms by layer: what a measurement of the workload
// counts (its pieces), and what the core's counters say between the
// window's edges. The sums are in the core's cycles.

// Halted is the layer name of the cycles the core was halted, in sums.
const Halted = "halted"

// Sum returns the cycles of the host's atoms in [from, to) (cycles) by
// layer, as a piece counting count would: see workload.Count. Cycles of
// no call are under "-", halted ones under Halted; CountInterrupts puts
// what is not an interrupt's under DMA.
func (h *HostTrace) Sum(p workload.Piece) map[string]int64 {
	out := map[string]int64{}
	for _, a := range h.Atoms {
		from, to := max(h.cycle(a.From), p.From), min(h.cycle(a.To), p.To)
		if to <= from {
			continue
		}
		switch p.Count {
		case workload.CountThread:
			if a.Interrupt || a.Track != p.Context {
				continue
			}
		case workload.CountInterrupts:
			if !a.Interrupt {
				out["DMA"] += to - from
				continue
			}
		case workload.CountAllButWire:
			if a.Layer == Halted {
				// Halted counts only while a DMA engine moves data.
				out[Halted] += h.dmaCycles(from, to)
				continue
			}
		}
		out[a.Layer] += to - from
	}
	return out
}

// dmaCycles is the cycles of [from, to) in which a DMA engine of the
// host's cards was busy (bursts of one engine do not overlap).
func (h *HostTrace) dmaCycles(from, to int64) int64 {
	var n int64
	for _, d := range h.DMA {
		a, b := max(h.cycle(d.From), from), min(h.cycle(d.To), to)
		if b > a {
			n += b - a
		}
	}
	return n
}

// Sums returns what the trace's slices give for measurement m: its
// pieces' sums added, the idle loop's and the halted cycles as DMA when
// the measurement counts them so, without the layers of no cycles.
func (h *HostTrace) Sums(m Measure) map[string]int64 {
	out := map[string]int64{}
	for _, p := range m.Pieces {
		for l, v := range h.Sum(p) {
			out[l] += v
		}
	}
	if m.IdleAsDMA {
		out["DMA"] += out["IDLE"] + out[Halted]
		delete(out, "IDLE")
		delete(out, Halted)
	}
	for l, v := range out {
		if v == 0 {
			delete(out, l)
		}
	}
	return out
}

// Mismatch is a measurement whose slices do not sum to what the
// workload reported, or a host whose slices do not sum to its core's
// counters between the window's edges.
type Mismatch struct {
	What      string // the measurement's name, or "host H: the window"
	Slices    map[string]int64
	Reported  map[string]int64
	SameTotal bool // the sums differ only in how they split the same cycles
}

func (m Mismatch) String() string {
	s := fmt.Sprintf("%s: the slices sum to %s, the counters say %s", m.What, layers(m.Slices), layers(m.Reported))
	if m.SameTotal {
		s += " (the same cycles in all)"
	}
	return s
}

// Check compares every measurement in the trace with the sums of its
// slices, and each host's slices between the window's edges with its
// core's counters, and returns what differs.
//
// A host's slices always sum to its counters between the window's edges
// (the edges are read when the core has caught up with the event clock).
// A measurement can differ from its slices in one case, which is the
// measurement's and not the trace's: a reading of the core's counters
// taken while the core had charged work past the event clock, when an
// interrupt then arrives before the end of that work. The counters put
// the interrupt's cycles after the reading; the core, and the trace,
// before the rest of the work, which the interrupt delays (package cpu).
// The span the measurement gives then holds the interrupt's cycles in
// place of as many of the work's, or, when the reading begins the span,
// of the work before it: the layers differ by them, and when the
// reading begins the span, the totals too (SameTotal is false then). On
// the Linux/SimOS study's machines, every UDP and TCP measurement agrees
// exactly; VIA's sends of 8 KiB differ in how they split the same
// cycles.
func (t *Trace) Check() []Mismatch {
	var bad []Mismatch
	for _, h := range t.Hosts {
		for _, m := range h.Measures {
			got := h.Sums(m)
			want := map[string]int64{}
			for l, v := range m.Layers {
				want[l] = int64(math.Round(v))
			}
			if !maps.Equal(got, want) {
				bad = append(bad, Mismatch{What: m.Name, Slices: got, Reported: want, SameTotal: total(got) == total(want)})
			}
		}
		if h.Close.Layers != nil {
			got, want := h.WindowSums()
			if !maps.Equal(got, want) {
				bad = append(bad, Mismatch{What: "host " + h.Name + ": the window", Slices: got, Reported: want, SameTotal: total(got) == total(want)})
			}
		}
	}
	return bad
}

func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// WindowSums returns the host's atoms between the window's edges (the
// cycles its readings were taken at) by layer, halted cycles under
// Halted, and what the core's counters say of the same cycles.
func (h *HostTrace) WindowSums() (slices, counters map[string]int64) {
	slices = h.Sum(workload.Piece{From: h.Open.Cycle, To: h.Close.Cycle, Count: workload.CountAll})
	counters = map[string]int64{}
	for l, v := range h.Close.Layers {
		counters[l] = v - h.Open.Layers[l]
	}
	counters[Halted] = h.Close.Idle - h.Open.Idle
	for _, m := range []map[string]int64{slices, counters} {
		for l, v := range m {
			if v == 0 {
				delete(m, l)
			}
		}
	}
	return slices, counters
}

// layers writes a sum by layer, its layers sorted: "DMA=120 IP=300".
func layers(m map[string]int64) string {
	var b strings.Builder
	for i, l := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", l, m[l])
	}
	return b.String()
}
