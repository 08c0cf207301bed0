package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"simkron/internal/charttest"
	"simkron/report"
	"simkron/report/shape"
)

// sizes are the compare workload's message sizes.
var sizes = []int{4, 16, 64, 256, 1024, 1460, 2048, 4096, 8192, 16384, 32768}

// stacks are the layers of each protocol's paths, send and receive.
var stacks = map[string][2][]string{
	"UDP": {{"APPL", "UDP", "IP", "DEV", "DMA", "KERN"}, {"UDP", "IP", "DEV", "DMA", "KERN"}},
	"TCP": {{"APPL", "TCP", "IP", "DEV", "DMA", "KERN"}, {"APPL", "TCP", "IP", "DEV", "DMA", "KERN"}},
	"VIA": {{"APPL", "TRANS", "DEV", "DMA", "KERN"}, {"APPL", "TRANS", "DEV", "DMA", "KERN"}},
	"TP4": {{"APPL", "TP4", "CLNS", "LLC", "DEV", "DMA", "KERN"}, {"TP4", "CLNS", "LLC", "DEV", "DMA", "KERN"}},
}

// comparison is a result shaped as the compare workload's: four
// protocols' layers over sizes whose costs span three decades, their
// medians, and the layers side by side as grouped bars.
func comparison() *report.Result {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "compare", Complete: true}}
	protos := []string{"UDP", "TCP", "VIA", "TP4"}
	medians := shape.Chart{Name: "medians", Caption: "medians"}
	bars := shape.Bars{Name: "compare", Caption: "bars"}
	for di, dir := range []string{shape.Send, shape.Receive} {
		mp := shape.Plot{Title: dir, XLabel: "message size (log scale)", YLabel: "median cycles", XLog: true}
		bp := shape.BarPlot{Title: dir, XLabel: "message size", YLabel: "mean cycles per message"}
		for _, s := range sizes {
			bp.Categories = append(bp.Categories, shape.SizeLabel(s))
		}
		for pi, p := range protos {
			b := shape.Breakdown{Protocol: p, Direction: dir, SizeName: "size", Unit: "message", What: "the call " + p}
			l := shape.Line{Label: p, Marks: true}
			g := shape.BarGroup{Label: p}
			for _, layer := range stacks[p][di] {
				part := shape.BarStack{Label: layer}
				for _, s := range sizes {
					part.Values = append(part.Values, float64(100*(pi+1+di))+float64(s)*float64(pi+1)/float64(len(stacks[p][di])))
				}
				g.Parts = append(g.Parts, part)
			}
			for k, s := range sizes {
				pt := shape.Point{Size: s}
				var total float64
				for _, part := range g.Parts {
					pt.Layers = append(pt.Layers, shape.LayerCycles{Layer: part.Label, Cycles: part.Values[k]})
					total += part.Values[k]
				}
				b.Points = append(b.Points, pt)
				l.Points = append(l.Points, shape.XY{X: float64(s), Y: total})
			}
			r.Figures.Breakdowns = append(r.Figures.Breakdowns, b)
			mp.Lines = append(mp.Lines, l)
			bp.Groups = append(bp.Groups, g)
		}
		medians.Plots = append(medians.Plots, mp)
		bars.Plots = append(bars.Plots, bp)
	}
	r.Figures.Charts = []shape.Chart{medians}
	r.Figures.Bars = []shape.Bars{bars}
	return r
}

// workloadCharts is a result with charts shaped as ttcp's (a whole
// transfer and its first second), the TOP study's (six lines of
// throughput, remote and loopback; shares of cost categories) and its
// pies.
func workloadCharts() *report.Result {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "top", Complete: true}}
	progress := shape.Chart{Name: "progress", Caption: "bytes against time"}
	for _, limit := range []float64{0, 1} {
		p := shape.Plot{Title: "ttcp: bytes at the receiver's card against time", XLabel: "seconds since the first data segment",
			YLabel: "bytes", XMin: shape.Ptr(0), YMin: shape.Ptr(0)}
		if limit > 0 {
			p.Title, p.XMax = "ttcp: the first 1 s", shape.Ptr(limit)
		}
		for i, name := range []string{"fddi-stall", "mtu-1500", "nodelay", "sndbuf-16k", "no-delack"} {
			l := shape.Line{Label: name, Step: true}
			for j := range 200 {
				x := float64(j) * 0.01 * float64(1+i*3)
				if limit == 0 || x <= limit {
					l.Points = append(l.Points, shape.XY{X: x, Y: float64(j) * 10000})
				}
			}
			p.Lines = append(p.Lines, l)
		}
		progress.Plots = append(progress.Plots, p)
	}
	upper := shape.Chart{Name: "upper", Caption: "throughput"}
	shares := shape.Chart{Name: "shares", Caption: "shares"}
	cats := []string{"memory copy", "checksum", "memory management", "task scheduling", "others"}
	for _, where := range []string{"remote", "loopback"} {
		p := shape.Plot{Title: "upper, " + where, XLabel: "message size (octets)", YLabel: "Mbit/s", YMin: shape.Ptr(0)}
		for i, lv := range []string{"tp4", "session", "presentation"} {
			for j, c := range []string{"ack 1, checksum", "ack 4, no checksum"} {
				l := shape.Line{Label: lv + " " + c, Marks: true}
				for _, s := range []int{128, 512, 1152} {
					l.Points = append(l.Points, shape.XY{X: float64(s), Y: float64(s) / 200 * float64(1+i+j)})
				}
				p.Lines = append(p.Lines, l)
			}
		}
		upper.Plots = append(upper.Plots, p)
		sp := shape.Plot{Title: "tp4 user: TP4 " + where, XLabel: "message size (octets)", YLabel: "share (%)", YMin: shape.Ptr(0), YMax: shape.Ptr(100)}
		split := shape.Split{Title: "tp4 user: TP4 at the originator, 128 B (" + where + ")", Unit: "cycles"}
		for i, c := range cats {
			l := shape.Line{Label: c, Marks: true}
			for _, s := range []int{128, 512, 1152} {
				l.Points = append(l.Points, shape.XY{X: float64(s), Y: float64(10 + 15*i)})
			}
			sp.Lines = append(sp.Lines, l)
			split.Categories = append(split.Categories, shape.Category{Name: c, Value: float64(i * 100)})
		}
		shares.Plots = append(shares.Plots, sp)
		r.Figures.Splits = append(r.Figures.Splits, split)
	}
	r.Figures.Charts = []shape.Chart{progress, upper, shares}
	return r
}

// Every chart is readable at the sizes the report draws it (and a
// narrower one): no two series of one chart share a colour, no two texts
// overlap and none runs off the canvas.
func TestChartsReadable(t *testing.T) {
	for _, r := range []*report.Result{sweep(), comparison(), workloadCharts()} {
		for _, c := range report.ChartNames(r) {
			for _, size := range []report.ChartSize{{}, {Width: 1100}, {Width: 800}} {
				name := fmt.Sprintf("%s/%s/%d", r.Workload, c, size.Width)
				legend, err := report.ChartLegend(r, c, size)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				seen := map[string]string{}
				for _, e := range legend {
					if other, ok := seen[e.Color]; ok {
						t.Errorf("%s: %q and %q are both %s", name, other, e.Label, e.Color)
					}
					seen[e.Color] = e.Label
				}
				var b bytes.Buffer
				if err := report.WriteSVG(&b, r, c, size); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				problems, err := charttest.Problems(b.Bytes())
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, p := range problems {
					t.Errorf("%s: %s", name, p)
				}
			}
		}
	}
}

// legendColors returns each series' colour in chart c of r.
func legendColors(t *testing.T, r *report.Result, c report.Chart) map[string]string {
	t.Helper()
	legend, err := report.ChartLegend(r, c, report.ChartSize{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range legend {
		m[e.Label] = e.Color
	}
	return m
}

// A layer has its colour of the one table of layers in every chart, a
// protocol its transport layer's (VIA's is TRANS), a cost category one
// colour in pies and lines alike.
func TestOneColourEach(t *testing.T) {
	layer := map[string]string{}
	for _, l := range shape.Layers {
		layer[l.Name] = l.Color
	}
	cmp := comparison()
	for _, c := range []report.Chart{report.ChartLayers, "compare"} {
		for name, col := range legendColors(t, cmp, c) {
			if layer[name] != col {
				t.Errorf("%s: layer %s is %s, the table's %s", c, name, col, layer[name])
			}
		}
	}
	protocol := map[string]string{"UDP": layer["UDP"], "TCP": layer["TCP"], "TP4": layer["TP4"], "VIA": layer["TRANS"]}
	for _, c := range []report.Chart{report.ChartLatency, "medians"} {
		got := legendColors(t, cmp, c)
		if len(got) != 4 {
			t.Errorf("%s: legend %v", c, got)
		}
		for name, col := range got {
			if protocol[name] != col {
				t.Errorf("%s: protocol %s is %s, want %s", c, name, col, protocol[name])
			}
		}
	}
	w := workloadCharts()
	pies, lines := legendColors(t, w, report.ChartSplits), legendColors(t, w, "shares")
	if len(pies) != 5 {
		t.Errorf("pies' categories %v", pies)
	}
	for name, col := range pies {
		if lines[name] != col {
			t.Errorf("category %s: %s in the pies, %s in the lines", name, col, lines[name])
		}
	}
}

// A chart of more series than there are colours repeats colours, each
// repeat dashed.
func TestMoreSeriesThanColours(t *testing.T) {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "x", Complete: true}}
	p := shape.Plot{Title: "many", XLabel: "x", YLabel: "y"}
	for i := range 20 {
		p.Lines = append(p.Lines, shape.Line{Label: fmt.Sprintf("run %d", i), Points: []shape.XY{{X: 0, Y: float64(i)}, {X: 1, Y: float64(i + 1)}}})
	}
	r.Figures.Charts = []shape.Chart{{Name: "many", Plots: []shape.Plot{p}}}
	legend, err := report.ChartLegend(r, "many", report.ChartSize{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range legend {
		if seen[e.Color] && !e.Dashed {
			t.Errorf("%s repeats %s and is not dashed", e.Label, e.Color)
		}
		if !seen[e.Color] && e.Dashed {
			t.Errorf("%s is dashed in a colour of its own", e.Label)
		}
		seen[e.Color] = true
	}
	if len(seen) < 14 {
		t.Errorf("%d colours for 20 series", len(seen))
	}
}

// svgTexts returns the texts of chart c of r.
func svgTexts(t *testing.T, r *report.Result, c report.Chart) []string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteSVG(&b, r, c, report.ChartSize{}); err != nil {
		t.Fatal(err)
	}
	texts, _, _, err := charttest.Texts(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range texts {
		out = append(out, x.S)
	}
	return out
}

// Values that span decades are drawn on log axes, labelled at the powers
// of ten; sizes are labelled in bytes and KiB, the largest (32 KiB)
// always.
func TestLogAxes(t *testing.T) {
	cmp := comparison()
	for _, c := range []report.Chart{report.ChartLayers, report.ChartLatency, "medians"} {
		texts := strings.Join(svgTexts(t, cmp, c), "|")
		for _, want := range []string{"|1k|", "|10k|", "32 KiB", "4 B"} {
			if c != report.ChartLayers && want == "4 B" {
				continue // the log x axis labels every other power of two from the top
			}
			if !strings.Contains("|"+texts+"|", want) {
				t.Errorf("%s: no %q in %s", c, want, texts)
			}
		}
		for _, bad := range []string{"1K", "32K", "32768"} {
			if strings.Contains("|"+texts+"|", "|"+bad+"|") {
				t.Errorf("%s: a label %q", c, bad)
			}
		}
	}
	// A linear scale where the values span less: the TOP study's
	// throughput, from 0 as the workload asks.
	texts := svgTexts(t, workloadCharts(), "upper")
	if !strings.Contains(strings.Join(texts, "|"), "|0|") {
		t.Errorf("upper: no 0 on its linear axis: %q", texts)
	}
}

// The compare chart is small multiples: its sizes cut into ranges a
// linear scale shows, every bar labelled with its protocol.
func TestBarsRanges(t *testing.T) {
	cmp := comparison()
	texts := svgTexts(t, cmp, "compare")
	count := func(s string) int {
		n := 0
		for _, x := range texts {
			if x == s {
				n++
			}
		}
		return n
	}
	// Eleven sizes in each of two plots: every bar labelled (and the
	// legend names the layers UDP, TCP and TP4 once more).
	for _, p := range []string{"UDP", "TCP", "VIA", "TP4"} {
		want := 2 * len(sizes)
		if p != "VIA" {
			want++
		}
		if n := count(p); n != want {
			t.Errorf("%s labels %d bars, want %d", p, n, want)
		}
	}
	var titles []string
	for _, x := range texts {
		if strings.HasPrefix(x, "send, ") || strings.HasPrefix(x, "receive, ") {
			titles = append(titles, x)
		}
	}
	if len(titles) < 4 || len(titles)%2 != 0 {
		t.Errorf("panels %q: want send and receive over two or more ranges", titles)
	}
	_, caption := captionOf(t, cmp, "compare")
	if !strings.Contains(caption, "ranges") || !strings.Contains(caption, "labelled with its protocol") {
		t.Errorf("caption %q", caption)
	}
}

// captionOf returns chart c's figure and caption as the HTML report has
// them.
func captionOf(t *testing.T, r *report.Result, c report.Chart) (figure, caption string) {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	i := strings.Index(s, `<figure id="chart-`+string(c)+`"`)
	if i < 0 {
		t.Fatalf("no figure %s", c)
	}
	s = s[i:]
	s = s[:strings.Index(s, "</figure>")]
	j := strings.Index(s, "<figcaption>")
	return s[:j], strings.TrimSuffix(s[j+len("<figcaption>"):], "</figcaption>\n")
}
