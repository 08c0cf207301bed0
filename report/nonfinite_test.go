package report_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"simkron/report"
	"simkron/report/shape"
)

// A value JSON cannot hold (NaN, an infinity) anywhere in a result does
// not lose it: the result is written with null in its place, the places
// listed in non_finite, and it reads back.
func TestNonFiniteWritten(t *testing.T) {
	type row struct {
		Size int                `json:"size"`
		RTT  float64            `json:"rtt_us"`
		Per  map[string]float64 `json:"per,omitempty"`
		Note string             `json:"note"`
		Ptr  *float64           `json:"ptr,omitempty"`
	}
	inf := math.Inf(1)
	r := sample()
	r.Annotations = &report.Annotations{Scripts: []string{"a.tcl"}, Buckets: []report.Bucket{{Name: "b", Count: 2, Sum: inf, Mean: inf, Max: inf}}}
	r.Sections = []report.Section{{Name: "udp", Value: []row{
		{Size: 4, RTT: 12.5, Note: "-1.2345678901234568e-300 in a string stays"},
		{Size: 8, RTT: math.NaN(), Per: map[string]float64{"a": 1, "b": math.Inf(-1)}, Ptr: &inf},
	}}}
	r.Figures.Charts = []shape.Chart{{Name: "c", Plots: []shape.Plot{{Lines: []shape.Line{{Points: []shape.XY{{X: 1, Y: math.NaN()}}}}}}}}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	out := b.String()
	got, err := report.ReadJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("reading it back: %v\n%s", err, out)
	}
	want := []string{"udp[1].rtt_us", "udp[1].per.b", "udp[1].ptr",
		"annotations.buckets[0].sum", "annotations.buckets[0].mean", "annotations.buckets[0].max",
		"figures.charts[0].plots[0].lines[0].points[0].y"}
	if !slices.Equal(got.NonFinite, want) {
		t.Errorf("non_finite %q, want %q", got.NonFinite, want)
	}
	for _, w := range []string{`"rtt_us": null`, `"b": null`, `"sum": null`, `"y": null`, `"rtt_us": 12.5`, `"a": 1`,
		`"-1.2345678901234568e-300 in a string stays"`, `"count": 2`} {
		if !strings.Contains(out, w) {
			t.Errorf("the result lacks %s:\n%s", w, out)
		}
	}
	// Read back, the result is written again as it was read.
	var back bytes.Buffer
	if err := got.WriteJSON(&back); err != nil || back.String() != out {
		t.Errorf("written again (%v):\n%s", err, back.String())
	}
	// The result itself is left as it was.
	if !math.IsInf(r.Annotations.Buckets[0].Sum, 1) || r.NonFinite != nil {
		t.Error("WriteJSON changed the result")
	}
	// Written twice, the same bytes.
	var again bytes.Buffer
	r.WriteJSON(&again)
	if again.String() != out {
		t.Error("two writings differ")
	}
	// A result with only finite values is written as before, with no
	// non_finite field.
	b.Reset()
	if err := sample().WriteJSON(&b); err != nil || strings.Contains(b.String(), "non_finite") {
		t.Errorf("a finite result: %v\n%s", err, b.String())
	}
}

// A result that holds the marker itself as a real value still has it
// written as a number.
func TestNonFiniteMarkerInData(t *testing.T) {
	r := sample()
	r.Sections = []report.Section{{Name: "udp", Value: []float64{-1.2345678901234568e-300, math.NaN()}}}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "-1.2345678901234568e-300") || !strings.Contains(b.String(), "null") {
		t.Errorf("marker in the data:\n%s", b.String())
	}
}
