// Package latency holds what the measuring programs over IP (the UDP and
// TCP latency sweeps, ttcp) share: the host they run on, the hooks they
// measure through, a row per message size with the send and receive
// latency statistics and their splits by layer, and the arithmetic on the
// CPU's per-layer counters that produces them.
package latency

import (
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat"

	"simkron/cpu"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// Host is what a measuring program needs of a host.
type Host struct {
	Name   string
	Kernel *kernel.Kernel
	Inet   *inet.Stack
	// Observe installs an observer of the frames reaching the host's
	// card; observers installed earlier keep seeing them.
	Observe func(func(frame []byte))
}

// Watch adds enter and exit (either may be nil) to the function-entry and
// exit hooks of c, after the ones already there: the simulator's
// measurements of calls, which the programs never see.
func Watch(c *cpu.CPU, enter, exit func(c *cpu.CPU, s *cpu.Symbol)) {
	chain := func(prev, f func(*cpu.CPU, *cpu.Symbol)) func(*cpu.CPU, *cpu.Symbol) {
		switch {
		case f == nil:
			return prev
		case prev == nil:
			return f
		}
		return func(c *cpu.CPU, s *cpu.Symbol) { prev(c, s); f(c, s) }
	}
	c.Hooks.Enter = chain(c.Hooks.Enter, enter)
	c.Hooks.Exit = chain(c.Hooks.Exit, exit)
}

// Summary is a sample's statistics, in cycles.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

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
type LayerCost struct {
	Layer  string  `json:"layer"`
	Cycles float64 `json:"cycles"`
}

// Row is one message size's result.
type Row struct {
	Size int `json:"size"`
	// Packets is how many IP datagrams carry one message on the wire:
	// UDP fragments, or TCP data segments of the maximum segment size.
	Packets    int         `json:"packets"`
	Messages   int         `json:"messages"`
	Lost       int         `json:"lost"`
	Corrupt    int         `json:"corrupt"`
	RTTMicros  float64     `json:"rtt_us"`         // mean round trip seen by the client
	Send       Summary     `json:"send_cycles"`    // the sending thread's cycles inside the send call
	Receive    Summary     `json:"receive_cycles"` // first frame at the card to the receive call returning
	SendLayers []LayerCost `json:"send_layers"`
	RecvLayers []LayerCost `json:"receive_layers"`
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
