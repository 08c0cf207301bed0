package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"simkron/report/shape"
)

// yRanges returns each drawn panel's y range.
func yRanges(f *figure) [][2]float64 {
	var out [][2]float64
	for _, row := range f.rows {
		for _, p := range row {
			if p != nil {
				out = append(out, [2]float64{p.Y.Min, p.Y.Max})
			}
		}
	}
	return out
}

// breakdownsOf returns a result of UDP and VIA send and receive, VIA ten
// times cheaper, over sizes whose costs span three decades.
func breakdownsOf() *Result {
	r := &Result{Header: Header{Schema: Schema, Workload: "compare", Complete: true}}
	for pi, p := range []string{"UDP", "VIA"} {
		for _, dir := range []string{shape.Send, shape.Receive} {
			b := shape.Breakdown{Protocol: p, Direction: dir, SizeName: "size", Unit: "message"}
			for _, s := range []int{4, 1024, 32768} {
				c := float64(1000+s*10) / math.Pow(10, float64(pi))
				b.Points = append(b.Points, shape.Point{Size: s, Layers: []shape.LayerCycles{{Layer: "DEV", Cycles: c}, {Layer: "DMA", Cycles: c}}})
			}
			r.Figures.Breakdowns = append(r.Figures.Breakdowns, b)
		}
	}
	return r
}

// The panels of the layers chart share one y scale (VIA's cheap path
// does not look as costly as UDP's), logarithmic when the totals span
// decades.
func TestLayersSharedY(t *testing.T) {
	f, err := layersFigure(breakdownsOf(), ChartSize{})
	if err != nil {
		t.Fatal(err)
	}
	ys := yRanges(f)
	if len(ys) != 4 {
		t.Fatalf("%d panels", len(ys))
	}
	for _, y := range ys[1:] {
		if y != ys[0] {
			t.Errorf("y ranges %v: not shared", ys)
		}
	}
	// Log10 of the axis: from a power of ten below the cheapest (200
	// cycles) to above the dearest (655,360).
	if ys[0][0] != 2 || ys[0][1] < math.Log10(655360) {
		t.Errorf("y range %v", ys[0])
	}
	if !strings.Contains(f.caption, "logarithmic") {
		t.Errorf("caption %q", f.caption)
	}
}

// A line chart's panels of one quantity over the same x range share their
// y axis; a panel over another x range (ttcp's first second) keeps its
// own.
func TestLinesSharedY(t *testing.T) {
	line := func(label string, ys ...float64) shape.Line {
		l := shape.Line{Label: label}
		for i, y := range ys {
			l.Points = append(l.Points, shape.XY{X: float64(i), Y: y})
		}
		return l
	}
	ch := shape.Chart{Name: "c", Plots: []shape.Plot{
		{Title: "a", YLabel: "Mbit/s", YMin: shape.Ptr(0), Lines: []shape.Line{line("x", 1, 2)}},
		{Title: "b", YLabel: "Mbit/s", YMin: shape.Ptr(0), Lines: []shape.Line{line("x", 5, 9)}},
		{Title: "zoom", YLabel: "Mbit/s", YMin: shape.Ptr(0), XMax: shape.Ptr(0.5), Lines: []shape.Line{line("x", 1, 2)}},
	}}
	f, err := lineFigure(ch, ChartSize{})
	if err != nil {
		t.Fatal(err)
	}
	ys := yRanges(f)
	if ys[0] != ys[1] || ys[0][1] < 9 || ys[2][1] > 3 {
		t.Errorf("y ranges %v: want the first two shared, the zoom its own", ys)
	}
	if len(f.legend) != 1 {
		t.Errorf("legend %v: a series once", f.legend)
	}
}

func TestSplitRanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tallest []float64
		most    int
		want    []sizeRange
	}{
		{"one decade", []float64{1, 2, 5, 9}, 10, []sizeRange{{0, 4}}},
		// The compare workload's: 4.5k at 4 B to 348k at 32 KiB.
		{"three decades", []float64{4492, 4565, 4893, 6313, 15241, 18625, 25826, 46659, 88382, 174344, 348148}, 20,
			[]sizeRange{{0, 7}, {7, 11}}},
		{"too many for a row", []float64{1, 1, 1, 1, 1}, 2, []sizeRange{{0, 1}, {1, 3}, {3, 5}}},
		{"no bars", []float64{0, 0}, 5, []sizeRange{{0, 2}}},
		{"none", nil, 5, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitRanges(tc.tallest, tc.most)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ranges %v, want %v", got, tc.want)
			}
			for _, r := range got {
				if r.to-r.from > max(tc.most, 1) || spread(tc.tallest, r.from, r.to) > decade {
					t.Errorf("range %v: %d sizes spread %.1f", r, r.to-r.from, spread(tc.tallest, r.from, r.to))
				}
			}
		})
	}
}

func labels(ts []plot.Tick) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// Size axes: powers of two in bytes and KiB, the largest always
// labelled; categories side by side, staggered on two lines, or every
// k-th, the last always.
func TestSizeTicks(t *testing.T) {
	all := labels(sizeTicks{most: 20}.Ticks(2, 15)) // 4 B to 32 KiB
	if want := []string{"4 B", "8 B", "16 B", "32 B", "64 B", "128 B", "256 B", "512 B", "1 KiB", "2 KiB", "4 KiB", "8 KiB", "16 KiB", "32 KiB"}; !slices.Equal(all, want) {
		t.Errorf("labels %q", all)
	}
	some := labels(sizeTicks{most: 7}.Ticks(2, 15))
	if want := []string{"8 B", "32 B", "128 B", "512 B", "2 KiB", "8 KiB", "32 KiB"}; !slices.Equal(some, want) {
		t.Errorf("labels %q", some)
	}
	// Few sizes measured, far enough apart: each labelled, the largest
	// (not a power of two) too; close ones fall back to powers of two.
	var measured []float64
	for _, b := range []float64{128, 256, 512, 1024, 1500} {
		measured = append(measured, math.Log2(b))
	}
	if got := labels(sizeTicks{most: 7, sizes: measured}.Ticks(7, math.Log2(1500))); !slices.Equal(got, []string{"128 B", "256 B", "512 B", "1 KiB", "1500 B"}) {
		t.Errorf("measured sizes: %q", got)
	}
	close := []float64{10, math.Log2(1472), 11}
	if got := labels(sizeTicks{most: 7, sizes: close}.Ticks(2, 15)); !slices.Contains(got, "32 KiB") || slices.Contains(got, "1472 B") {
		t.Errorf("close sizes: %q", got)
	}
	names := []string{"4 B", "16 B", "64 B", "256 B", "1 KiB", "1472 B", "2 KiB", "4 KiB", "8 KiB", "16 KiB", "32 KiB"}
	if got := labels(nominalTicks(names, 1000)(0, 10)); !slices.Equal(got, names) {
		t.Errorf("wide: %q", got)
	}
	stag := labels(nominalTicks(names, 300)(0, 10))
	if len(stag) != len(names) || stag[10] != "32 KiB" || stag[9] != "\n16 KiB" {
		t.Errorf("staggered: %q", stag)
	}
	thin := labels(nominalTicks(names, 100)(0, 10))
	if len(thin) >= len(names)/2 || thin[len(thin)-1] != "32 KiB" {
		t.Errorf("thinned: %q", thin)
	}
}
