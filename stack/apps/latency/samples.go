package latency

import (
	"slices"

	"gonum.org/v1/gonum/stat"

	"simkron/cpu"
	"simkron/report/shape"
)

// samples keeps every measured message's split by layer, per size, for
// the medians by layer.
type samples struct {
	// keep says to keep each message's split by layer, which costs an
	// allocation a message: for the medians by layer of the compare
	// workload.
	keep       bool
	send, recv [][]Layers
}

func newSamples(n int) samples {
	return samples{send: make([][]Layers, n), recv: make([][]Layers, n)}
}

// addThread records a send measured on the sending thread's counters.
func (s *samples) addThread(si int, before, after []cpu.LayerCycles) {
	if !s.keep {
		return
	}
	m := Layers{}
	m.Add(before, after)
	s.send[si] = append(s.send[si], m)
}

// addSpan records a span of the whole host's counters, idle as DMA.
func (s *samples) addSpan(dst *[][]Layers, si int, before, after cpu.Account) {
	if !s.keep {
		return
	}
	m := Layers{}
	m.AddReceive(before, after)
	(*dst)[si] = append((*dst)[si], m)
}

// of returns the per-message splits of direction dir.
func (s *samples) of(dir string) [][]Layers {
	switch dir {
	case shape.Send:
		return s.send
	case shape.Receive:
		return s.recv
	}
	return nil
}

// LayerMedians returns, per size of the schedule, the median over the
// measured messages of each layer's cycles (a message without cycles in a
// layer counts 0 there), in stack order, and the median of their totals,
// for direction dir: shape.Send or shape.Receive. The layers' medians need
// not add up to the total's.
func (s *Series) LayerMedians(dir string) (layers [][]LayerCost, totals []float64) {
	for _, ms := range s.samples.of(dir) {
		var names []string
		for _, m := range ms {
			for l, v := range m {
				name := layerName(l)
				if v != 0 && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		shape.SortLayers(names)
		var row []LayerCost
		tot := make([]float64, len(ms))
		for i, m := range ms {
			for _, v := range m {
				tot[i] += v
			}
		}
		for _, name := range names {
			xs := make([]float64, len(ms))
			for i, m := range ms {
				for l, v := range m {
					if layerName(l) == name {
						xs[i] += v
					}
				}
			}
			row = append(row, LayerCost{Layer: name, Cycles: median(xs)})
		}
		layers = append(layers, row)
		totals = append(totals, median(tot))
	}
	return layers, totals
}

func layerName(l cpu.Layer) string {
	if l == "" {
		return "-"
	}
	return string(l)
}

// median returns the median of xs (0 when empty) as Summarise does.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stat.Quantile(0.5, stat.Empirical, s, nil)
}
