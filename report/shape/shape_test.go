package shape_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/report/shape"
)

func TestSizeLabel(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0 B"}, {4, "4 B"}, {1023, "1023 B"}, {1024, "1 KiB"}, {1460, "1460 B"}, {1472, "1472 B"},
		{2048, "2 KiB"}, {32768, "32 KiB"}, {1536, "1536 B"}, {1 << 20, "1 MiB"}, {3 << 20, "3 MiB"}, {(1 << 20) + 1024, "1025 KiB"},
	} {
		if got := shape.SizeLabel(tc.n); got != tc.want {
			t.Errorf("SizeLabel(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// The one table of layers: every layer once, with a colour of its own
// and a definition; the stack order is the table's.
func TestLayers(t *testing.T) {
	hex := regexp.MustCompile(`^#[0-9A-F]{6}$`)
	names, colors := map[string]bool{}, map[string]string{}
	for _, l := range shape.Layers {
		if names[l.Name] {
			t.Errorf("%s twice", l.Name)
		}
		names[l.Name] = true
		if !hex.MatchString(l.Color) {
			t.Errorf("%s: colour %q", l.Name, l.Color)
		}
		if other, ok := colors[l.Color]; ok {
			t.Errorf("%s and %s are both %s", other, l.Name, l.Color)
		}
		colors[l.Color] = l.Name
		if l.Doc == "" {
			t.Errorf("%s: no definition", l.Name)
		}
	}
	ls := []string{"KERN", "ZZZ", "DMA", "APPL", "IP", "UDP", "AAA", "DEV"}
	shape.SortLayers(ls)
	if want := []string{"APPL", "UDP", "IP", "DEV", "DMA", "KERN", "AAA", "ZZZ"}; !slices.Equal(ls, want) {
		t.Errorf("sorted %v, want %v", ls, want)
	}
	if _, ok := shape.LayerNamed("DMA"); !ok {
		t.Error("no DMA")
	}
	if _, ok := shape.LayerNamed("dma"); ok {
		t.Error("dma found: names are upper case")
	}
}

func TestColumnGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		cols []shape.Column
		want []shape.ColumnGroup
	}{
		{"none", shape.Cols("size", "rtt"), nil},
		{"send and receive", []shape.Column{{Name: "size"}, {Name: "mean", Group: "send"}, {Name: "max", Group: "send"},
			{Name: "mean", Group: "receive"}, {Name: "max", Group: "receive"}, {Name: "note"}},
			[]shape.ColumnGroup{{"", 1}, {"send", 2}, {"receive", 2}, {"", 1}}},
		{"a group twice", []shape.Column{{Name: "a", Group: "g"}, {Name: "b"}, {Name: "c", Group: "g"}},
			[]shape.ColumnGroup{{"g", 1}, {"", 1}, {"g", 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shape.Table{Columns: tc.cols}.ColumnGroups()); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

// A layer table defines its size and total columns; its layers are
// defined by the report's table of layers.
func TestLayerTableDocs(t *testing.T) {
	b := shape.Breakdown{Protocol: "MAC", Direction: shape.Send, SizeName: "payload", Unit: "frame", What: "per frame",
		Points: []shape.Point{{Size: 64, Layers: []shape.LayerCycles{{Layer: "DEV", Cycles: 3}}}}}
	tab := shape.LayerTable(b)
	var docs []string
	for _, c := range tab.Columns {
		docs = append(docs, c.Doc)
	}
	want := []string{"the frame's size in bytes", "", "the sum of the layers: the mean cycles per frame"}
	if !slices.Equal(docs, want) {
		t.Errorf("docs %q, want %q", docs, want)
	}
}
