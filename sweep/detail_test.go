package sweep

import (
	"testing"

	"simkron/report"
)

// A merged sweep is functional when every point is, "mixed" when only
// some are (experiment.detail swept), and says nothing of detail when all
// ran in full detail; each point keeps its own.
func TestMergeDetail(t *testing.T) {
	for _, tc := range []struct {
		points []string
		want   string
	}{
		{[]string{"", ""}, ""},
		{[]string{"functional", "functional"}, "functional"},
		{[]string{"", "functional"}, "mixed"},
		{[]string{"functional", ""}, "mixed"},
	} {
		m := &Manifest{Grid: Grid{Config: "x.toml", Axes: []Axis{{Key: "experiment.detail", Values: []string{"a", "b"}}}}}
		var rs []*report.Result
		for _, d := range tc.points {
			rs = append(rs, &report.Result{Header: report.Header{Experiment: "x", Detail: d, Complete: true}})
		}
		out := Merge(m, rs)
		if out.Detail != tc.want {
			t.Errorf("points %q: merged detail %q, want %q", tc.points, out.Detail, tc.want)
		}
		sec := out.Sections[0].Value.(Section)
		for i, p := range sec.Points {
			if p.Detail != tc.points[i] {
				t.Errorf("points %q: point %d detail %q", tc.points, i, p.Detail)
			}
		}
	}
}
