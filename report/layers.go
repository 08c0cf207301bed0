package report

import "simkron/report/shape"

// breakdowns returns r's per-layer measurements that have any layer, in
// the result's order.
func breakdowns(r *Result) []shape.Breakdown {
	var bs []shape.Breakdown
	for _, b := range r.Figures.Breakdowns {
		if b.HasLayers() {
			bs = append(bs, b)
		}
	}
	return bs
}
