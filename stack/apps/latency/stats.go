package latency

import (
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"simkron/cpu"
	"simkron/report/shape"
)

// Summary is a sample's statistics, in cycles.
type Summary = shape.Summary

// Summarise returns the statistics of xs (zero when empty).
func Summarise(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Summary{N: len(s), Mean: stat.Mean(s, nil), Min: s[0], Median: stat.Quantile(0.5, stat.Empirical, s, nil), Max: s[len(s)-1]}
}

// LayerCost is the mean cycles of one layer per message.
type LayerCost = shape.LayerCycles

// Row is one message size's result.
type Row struct {
	Size int `json:"size"`
	// Packets is how many IP datagrams carry one message on the wire:
	// UDP fragments, or TCP data segments of the maximum segment size.
	Packets  int `json:"packets"`
	Messages int `json:"messages"`
	// Lost counts measured messages whose echo never came in time;
	// Corrupt, echoes that came with wrong bytes. Duplicates counts
	// echoes of a message already answered, Stale echoes of one the client
	// had given up on (both dropped, the client waiting on).
	Lost       int         `json:"lost"`
	Corrupt    int         `json:"corrupt"`
	Duplicates int         `json:"duplicates,omitempty"`
	Stale      int         `json:"stale,omitempty"`
	RTTMicros  float64     `json:"rtt_us"`         // mean round trip seen by the client
	Send       Summary     `json:"send_cycles"`    // the send call's cycles (send_span: the thread's, or the host's)
	Receive    Summary     `json:"receive_cycles"` // first frame at the card to the receive call returning
	SendLayers []LayerCost `json:"send_layers"`
	RecvLayers []LayerCost `json:"receive_layers"`
	// ReceiveBusy is the receive latency without the host's idle cycles
	// in it, and RecvBusyLayers its split (receive_busy only).
	ReceiveBusy    *Summary    `json:"receive_busy_cycles,omitempty"`
	RecvBusyLayers []LayerCost `json:"receive_busy_layers,omitempty"`
}

// Layers accumulates cycles by layer over the messages of one size.
type Layers map[cpu.Layer]float64

// Add adds after minus before, layer by layer.
func (m Layers) Add(before, after []cpu.LayerCycles) {
	for i, l := range after {
		c := l.Cycles
		if i < len(before) {
			c -= before[i].Cycles
		}
		m[l.Layer] += float64(c)
	}
}

// AddReceive adds a receiving host's counters between two readings: every
// cycle by layer, with the idle loop's (the core waiting for the rest of
// the message: the wire and the card) counted as DMA.
func (m Layers) AddReceive(before, after cpu.Account) {
	m.Add(before.Layers, after.Layers)
	m[cpu.LayerDMA] += m[cpu.LayerIDLE] + float64(after.Idle-before.Idle)
	delete(m, cpu.LayerIDLE)
}

// Means returns the mean cycles per message of every layer that has any,
// sorted by layer name; nil when n is 0.
func (m Layers) Means(n int) []LayerCost {
	if n == 0 {
		return nil
	}
	var out []LayerCost
	for l, v := range m {
		if v != 0 {
			name := string(l)
			if name == "" {
				name = "-"
			}
			out = append(out, LayerCost{Layer: name, Cycles: v / float64(n)})
		}
	}
	slices.SortFunc(out, func(a, b LayerCost) int { return strings.Compare(a.Layer, b.Layer) })
	return out
}
