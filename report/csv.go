package report

import (
	"encoding/csv"
	"io"
	"strconv"
)

// CSVHeader is the header row of WriteCSV's table.
var CSVHeader = []string{"protocol", "direction", "size", "layer", "stat", "cycles"}

// WriteCSV writes r's per-layer measurements as one tidy table, a row per
// observation: protocol (MAC, UDP, TCP), direction (send, receive), message
// size in bytes, layer, stat and cycles. A layer's row has stat "mean"
// (the mean cycles per message spent in that layer); the measured latency
// of each size follows its layers as rows with layer "total" and stat
// mean, min, median and max. Rows come in a fixed order: MAC, UDP, then
// TCP, send then receive, sizes in the result's order, layers in stack
// order. Results without per-layer measurements (membench, ttcp, ping)
// give the header alone: their figures are in the JSON and the tables.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, b := range breakdowns(r) {
		for _, p := range b.points {
			row := func(layer, stat string, v float64) {
				cw.Write([]string{b.protocol, b.direction, strconv.Itoa(p.size), layer, stat, num(v)})
			}
			ls := make([]string, len(p.layers))
			for i, l := range p.layers {
				ls[i] = l.layer
			}
			sortLayers(ls)
			for _, l := range ls {
				row(l, "mean", p.cycles(l))
			}
			if s := p.summary; s != nil {
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
