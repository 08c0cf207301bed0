package sweep

import (
	"slices"
	"testing"

	"simkron/report/shape"
)

// Bars of points with the same categories share a plot, their groups
// named after their points; other categories make a plot of their own.
func TestMergeBars(t *testing.T) {
	point := func(cats ...string) shape.Bars {
		return shape.Bars{Name: "compare", Plots: []shape.BarPlot{{Title: "send", Categories: cats,
			Groups: []shape.BarGroup{{Label: "UDP"}, {Label: "TCP"}}}}}
	}
	var cs []shape.Bars
	cs = mergeBars(cs, point("4", "1024"), "mtu=576")
	cs = mergeBars(cs, point("4", "1024"), "mtu=1500")
	cs = mergeBars(cs, point("8192"), "mtu=1500")
	if len(cs) != 1 || len(cs[0].Plots) != 2 {
		t.Fatalf("merged into %d charts, %v", len(cs), cs)
	}
	var labels []string
	for _, g := range cs[0].Plots[0].Groups {
		labels = append(labels, g.Label)
	}
	if want := []string{"UDP mtu=576", "TCP mtu=576", "UDP mtu=1500", "TCP mtu=1500"}; !slices.Equal(labels, want) {
		t.Errorf("groups %q, want %q", labels, want)
	}
	if p := cs[0].Plots[1]; !slices.Equal(p.Categories, []string{"8192"}) || len(p.Groups) != 2 {
		t.Errorf("the point with other sizes: %+v", p)
	}
}
