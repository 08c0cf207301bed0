package report_test

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"

	"simkron/report"
	"simkron/report/shape"
)

// logResult is a result with a latency chart of the sizes given and a
// workload chart on a log x axis of the points given, bounded by lo, hi.
func logResult(sizes []int, xs []float64, lo, hi *float64) *report.Result {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "compare", Complete: true}}
	b := shape.Breakdown{Protocol: "UDP", Direction: shape.Send, SizeName: "size", Unit: "message", What: "inside sendto"}
	for i, s := range sizes {
		b.Points = append(b.Points, shape.Point{Size: s, Layers: []shape.LayerCycles{{Layer: "UDP", Cycles: float64(100 * (i + 1))}}})
	}
	if len(sizes) > 0 {
		r.Figures.Breakdowns = []shape.Breakdown{b}
	}
	l := shape.Line{Label: "UDP", Marks: true}
	for _, x := range xs {
		l.Points = append(l.Points, shape.XY{X: x, Y: 1000 + x})
	}
	r.Figures.Charts = []shape.Chart{{Name: "medians", Caption: "medians", Plots: []shape.Plot{{
		Title: "send", XLabel: "message size (bytes, log scale)", YLabel: "median cycles", XLog: true,
		XMin: lo, XMax: hi, YMin: shape.Ptr(0), Lines: []shape.Line{l}}}}}
	return r
}

// A log axis cannot place x of 0 or below, which a result read from a
// file may hold: such points are left out and the chart's title says how
// many; with none left the axis is linear and draws them all; bounds a
// log scale cannot take are not applied. Never a panic, in every format.
func TestLogAxisNonPositive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      *report.Result
		chart  report.Chart
		want   []string // in the SVG's text
		absent []string
	}{
		{name: "every size 0", r: logResult([]int{0, 0}, nil, nil, nil), chart: report.ChartLatency,
			want: []string{"linear scale: no x above 0", "message size (bytes)"}, absent: []string{"left out", "size (log scale)"}},
		{name: "a size 0 among others", r: logResult([]int{0, 64, 1024}, nil, nil, nil), chart: report.ChartLatency,
			want: []string{"1 point left out", "message size (log scale)", "1 KiB"}, absent: []string{"linear scale"}},
		{name: "negative sizes", r: logResult([]int{-4, -1, 16}, nil, nil, nil), chart: report.ChartLatency,
			want: []string{"2 points left out", "16 B"}},
		{name: "a single size of 1", r: logResult([]int{1}, nil, nil, nil), chart: report.ChartLatency,
			absent: []string{"left out", "linear"}},
		{name: "workload chart x 0 and below", r: logResult(nil, []float64{0, -3, 256}, nil, nil), chart: "medians",
			want: []string{"2 points left out", "256 B"}},
		{name: "workload chart every x 0", r: logResult(nil, []float64{0, 0}, nil, nil), chart: "medians",
			want: []string{"linear scale"}},
		{name: "workload chart x_min 0", r: logResult(nil, []float64{4, 64}, shape.Ptr(0), nil), chart: "medians",
			want: []string{"64 B"}, absent: []string{"left out"}},
		{name: "workload chart x_max below 0", r: logResult(nil, []float64{4, 64}, nil, shape.Ptr(-1)), chart: "medians",
			want: []string{"64 B"}},
		{name: "workload chart bounds reversed", r: logResult(nil, []float64{4, 64}, shape.Ptr(1024), shape.Ptr(2)), chart: "medians"},
		{name: "workload chart no points", r: logResult(nil, nil, nil, nil), chart: "medians"},
		{name: "workload chart not finite", r: logResult(nil, []float64{4, math.Inf(1), math.NaN(), 64}, nil, nil), chart: "medians",
			want: []string{"2 points left out"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svg := render(t, tc.r, report.Options{Format: report.FormatSVG, Chart: tc.chart})
			text, elems := xmlText(t, svg)
			if elems["svg"] != 1 {
				t.Errorf("elements %v", elems)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("SVG lacks %q:\n%s", w, text)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(text, a) {
					t.Errorf("SVG says %q:\n%s", a, text)
				}
			}
			render(t, tc.r, report.Options{Format: report.FormatPNG, Chart: tc.chart, Size: report.ChartSize{Width: 400, Height: 300}})
			html := string(render(t, tc.r, report.Options{Format: report.FormatHTML}))
			for _, w := range tc.want {
				if !strings.Contains(html, w) {
					t.Errorf("HTML lacks %q", w)
				}
			}
		})
	}
}

// A point left out is left out: the chart with a size 0 among others
// draws the same marks as the chart without it, one fewer.
func TestLogAxisLeavesOut(t *testing.T) {
	with := render(t, logResult(nil, []float64{0, 64, 1024}, nil, nil), report.Options{Format: report.FormatSVG, Chart: "medians"})
	without := render(t, logResult(nil, []float64{64, 1024}, nil, nil), report.Options{Format: report.FormatSVG, Chart: "medians"})
	_, ew := xmlText(t, with)
	_, eo := xmlText(t, without)
	if ew["path"] != eo["path"] {
		t.Errorf("paths: %d with a point at 0, %d without it", ew["path"], eo["path"])
	}
}

// FuzzRender renders any bytes that read as a result in every format and
// chart: a result is a file from outside, and no result may make the
// renderer panic.
func FuzzRender(f *testing.F) {
	for _, r := range []*report.Result{sample(), sweep(), logResult([]int{0, 4, 64}, []float64{0, 4, 64}, shape.Ptr(0), nil)} {
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := report.ReadJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, format := range report.Formats {
			if format == report.FormatSVG || format == report.FormatPNG {
				continue
			}
			report.Write(io.Discard, r, report.Options{Format: format})
		}
		for _, c := range report.ChartNames(r) {
			report.Write(io.Discard, r, report.Options{Format: report.FormatSVG, Chart: c, Size: report.ChartSize{Width: 200, Height: 200}})
		}
	})
}
