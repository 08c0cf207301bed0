package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"simkron/report/shape"
)

// CSVHeader is the header row of WriteCSV's table.
var CSVHeader = []string{"protocol", "direction", "size", "layer", "stat", "cycles"}

// WriteCSV writes r's per-layer measurements (its breakdowns) as one tidy
// table, a row per observation: protocol (MAC, UDP, TCP, ...), direction
// (send, receive), message size in bytes, layer, stat and cycles. A
// layer's row has stat "mean" (the mean cycles per message spent in that
// layer); the measured latency of each size, when the workload measures
// one, follows its layers as rows with layer "total" and stat mean, min,
// median and max. Rows come in the result's order of breakdowns (each
// workload's send then receive), sizes in its order, layers in stack
// order. Results without per-layer measurements (membench, ttcp, ping)
// give the header alone: their figures are in the JSON and the tables.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, b := range breakdowns(r) {
		for _, p := range b.Points {
			row := func(layer, stat string, v float64) {
				cw.Write([]string{b.Protocol, b.Direction, strconv.Itoa(p.Size), layer, stat, num(v)})
			}
			ls := make([]string, len(p.Layers))
			for i, l := range p.Layers {
				ls[i] = l.Layer
			}
			shape.SortLayers(ls)
			for _, l := range ls {
				row(l, "mean", p.Cycles(l))
			}
			if s := p.Latency; s != nil {
				row("total", "mean", s.Mean)
				row("total", "min", s.Min)
				row("total", "median", s.Median)
				row("total", "max", s.Max)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
