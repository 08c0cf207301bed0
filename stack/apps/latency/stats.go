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
	// Lost counts measured messages sent whose echo never came in time
	// (or had not come when the run stopped); NotSent, measured messages
	// never sent, because the run stopped first (or the series failed):
	// Messages + Lost + NotSent is the messages the series was set to
	// measure. Corrupt counts echoes that came with wrong bytes.
	// Duplicates counts echoes of a message already answered, Stale
	// echoes of one the client had given up on (both dropped, the client
	// waiting on).
	Lost       int         `json:"lost"`
	NotSent    int         `json:"not_sent,omitempty"`
	Corrupt    int         `json:"corrupt"`
	Duplicates int         `json:"duplicates,omitempty"`
	Stale      int         `json:"stale,omitempty"`
	RTTMicros  float64     `json:"rtt_us"`         // mean round trip seen by the client
	Send       Summary     `json:"send_cycles"`    // as send_span defines it
	Receive    Summary     `json:"receive_cycles"` // as receive_span defines it
	SendLayers []LayerCost `json:"send_layers"`
	RecvLayers []LayerCost `json:"receive_layers"`
	// SendThread is, beside a send_span "dma" send, the sending thread's
	// own cycles in the call; ReceiveArrival, beside a receive_span "dma"
	// receive, the whole span from the first frame's arrival.
	SendThread     *Summary `json:"send_thread_cycles,omitempty"`
	ReceiveArrival *Summary `json:"receive_arrival_cycles,omitempty"`
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
		out = appendMean(out, l, v, n)
	}
	return sortMeans(out)
}

func appendMean(out []LayerCost, l cpu.Layer, v float64, n int) []LayerCost {
	if v == 0 {
		return out
	}
	name := string(l)
	if name == "" {
		name = "-"
	}
	return append(out, LayerCost{Layer: name, Cycles: v / float64(n)})
}

func sortMeans(out []LayerCost) []LayerCost {
	slices.SortFunc(out, func(a, b LayerCost) int { return strings.Compare(a.Layer, b.Layer) })
	return out
}

// layerSums is Layers for a series' running totals, which take every
// measured message: the sums by slot rather than in a map, so that adding
// a message costs no map access per layer. The series numbers the layers
// (slotFor) and each End maps its core's layer indices to those numbers
// once; a core's layers keep their indices. The sums are the same
// additions in the same order as Layers makes.
type layerSums []float64

// slotFor returns layer l's slot, numbering it if it is new.
func (s *Series) slotFor(l cpu.Layer) int {
	i, ok := s.slotOf[l]
	if !ok {
		i = len(s.slotLayer)
		s.slotOf[l] = i
		s.slotLayer = append(s.slotLayer, l)
	}
	return i
}

// slots returns the slots of the layers of a reading of e's core.
func (e *End) slots(ls []cpu.LayerCycles) []int {
	for i := len(e.slot); i < len(ls); i++ {
		e.slot = append(e.slot, e.s.slotFor(ls[i].Layer))
	}
	return e.slot
}

// at returns the sum of slot i, growing m to hold it.
func (m *layerSums) at(i int) *float64 {
	if i >= len(*m) {
		*m = append(*m, make([]float64, i+1-len(*m))...)
	}
	return &(*m)[i]
}

// add is Layers.Add for e's core's readings.
func (e *End) add(m *layerSums, before, after []cpu.LayerCycles) {
	slot := e.slots(after)
	for i, l := range after {
		c := l.Cycles
		if i < len(before) {
			c -= before[i].Cycles
		}
		*m.at(slot[i]) += float64(c)
	}
}

// addReceive is Layers.AddReceive for e's core's readings.
func (e *End) addReceive(m *layerSums, before, after cpu.Account) {
	e.add(m, before.Layers, after.Layers)
	idle := m.at(e.s.idleSlot)
	v := *idle
	*idle = 0
	*m.at(e.s.dmaSlot) += v + float64(after.Idle-before.Idle)
}

// means is Layers.Means for sums whose slots name the layers of layer.
func (m layerSums) means(layer []cpu.Layer, n int) []LayerCost {
	if n == 0 {
		return nil
	}
	var out []LayerCost
	for i, v := range m {
		out = appendMean(out, layer[i], v, n)
	}
	return sortMeans(out)
}
