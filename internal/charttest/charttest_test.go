package charttest_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"simkron/internal/charttest"
)

// svg wraps elements in an SVG of 200 by 100 units drawn as vgsvg draws:
// y up, each text flipped back.
func svg(elems ...string) []byte {
	return []byte(`<?xml version="1.0"?>
<svg width="200pt" height="100pt" viewBox="0 0 200 100" xmlns="http://www.w3.org/2000/svg">
<g transform="scale(1, -1) translate(0, -100)">
` + strings.Join(elems, "\n") + `
</g>
</svg>`)
}

// text is a vgsvg text at x, y (y up) of font size.
func text(x, y, size float64, s string) string {
	return fmt.Sprintf(`<text x="%g" y="%g" transform="scale(1, -1)" style="font-family:Liberation Sans;font-size:%gpx">%s</text>`, x, -y, size, s)
}

func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		svg   []byte
		wants []string // a substring of each problem, in order
	}{
		{name: "apart", svg: svg(text(10, 50, 10, "16384"), text(60, 50, 10, "32768"))},
		// The "1638432768": two size labels run into each other.
		{name: "side by side", svg: svg(text(10, 50, 10, "16384"), text(35, 50, 10, "32768")),
			wants: []string{`"16384" at (10.0,42.8)-(37.8,52.0) overlaps "32768"`}},
		{name: "lines apart", svg: svg(text(10, 50, 10, "UDP"), text(10, 40, 10, "4 B"))},
		{name: "lines too close", svg: svg(text(10, 50, 10, "UDP"), text(12, 45, 10, "4 B")), wants: []string{"overlaps"}},
		{name: "empty text", svg: svg(text(10, 50, 10, ""), text(10, 50, 10, "x"))},
		{name: "off the right", svg: svg(text(180, 50, 10, "a long label")), wants: []string{"runs off the 200x100 canvas"}},
		{name: "off the top", svg: svg(text(10, 99, 10, "top")), wants: []string{"runs off"}},
		// A y-axis label, rotated a quarter turn as vgsvg rotates it, runs
		// up the left edge from y 80: it covers x 2 to 11.2 and misses a
		// tick label at x 20; moved right, it runs over one.
		{name: "rotated", svg: svg(`<g transform="rotate(90)">`+
			`<text x="20" y="9.2" transform="scale(1, -1)" style="font-size:10px">cycles</text></g>`,
			text(20, 35, 10, "10k"))},
		{name: "rotated over a label", svg: svg(`<g transform="rotate(90)">`+
			`<text x="20" y="22" transform="scale(1, -1)" style="font-size:10px">cycles</text></g>`,
			text(20, 35, 10, "10k")), wants: []string{`"cycles" at (14.8,52.2)-(24.0,80.0) overlaps "10k"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := charttest.Problems(tc.svg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.wants) {
				t.Fatalf("problems %q, want %d", got, len(tc.wants))
			}
			for i, w := range tc.wants {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q lacks %q", got[i], w)
				}
			}
		})
	}
}

// The width estimate is near Liberation Sans's advance widths (from its
// hmtx table, in 1/2048 em): "32 KiB" is 1139+1139+569+1366+455+1366.
func TestWidth(t *testing.T) {
	want := float64(1139+1139+569+1366+455+1366) / 2048 * 10
	if got := charttest.Width("32 KiB", 10); math.Abs(got-want)/want > 0.08 {
		t.Errorf("width %.2f, want %.2f within 8%%", got, want)
	}
}

func TestBadSVG(t *testing.T) {
	for _, doc := range []string{"<svg><text>", `<svg><g transform="scale()"></g></svg>`} {
		if _, err := charttest.Problems([]byte(doc)); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}
