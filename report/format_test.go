package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"simkron/report"
	"simkron/report/shape"
)

// sweep is a result with a UDP sweep of three sizes split by layer both
// ways, a MAC table split by layer and a membench table, as a workload
// gives them: tables and breakdowns.
func sweep() *report.Result {
	r := sample()
	r.Experiment = "sweep"
	r.Description = "a synthetic sweep"
	udp := [2]shape.Breakdown{
		{Protocol: "UDP", Direction: shape.Send, SizeName: "size", Unit: "message", What: "inside sendto"},
		{Protocol: "UDP", Direction: shape.Receive, SizeName: "size", Unit: "message", What: "card to recvfrom"},
	}
	for i, size := range []int{4, 1024, 8192} {
		f := float64(i + 1)
		// In the result's (alphabetical) order, not the stack's.
		udp[0].Points = append(udp[0].Points, shape.Point{Size: size,
			Latency: &shape.Summary{N: 10, Mean: 1000 * f, Min: 900 * f, Median: 1000 * f, Max: 1200 * f},
			Layers: []shape.LayerCycles{{Layer: "APPL", Cycles: 100 * f}, {Layer: "DEV", Cycles: 200 * f},
				{Layer: "DMA", Cycles: 300 * f}, {Layer: "IP", Cycles: 250 * f}, {Layer: "UDP", Cycles: 150 * f}}})
		udp[1].Points = append(udp[1].Points, shape.Point{Size: size,
			Latency: &shape.Summary{N: 10, Mean: 2000 * f, Min: 1900 * f, Median: 2000 * f, Max: 2500 * f},
			Layers: []shape.LayerCycles{{Layer: "DEV", Cycles: 400 * f}, {Layer: "DMA", Cycles: 700 * f},
				{Layer: "IP", Cycles: 300 * f}, {Layer: "KERN", Cycles: 350 * f}, {Layer: "UDP", Cycles: 250 * f}}})
	}
	mac := [2]shape.Breakdown{
		{Protocol: "MAC", Direction: shape.Send, SizeName: "payload", Unit: "frame", What: "per frame",
			Points: []shape.Point{{Size: 128, Layers: []shape.LayerCycles{{Layer: "APPL", Cycles: 50}, {Layer: "DEV", Cycles: 70}}}}},
		{Protocol: "MAC", Direction: shape.Receive, SizeName: "payload", Unit: "frame", What: "per frame",
			Points: []shape.Point{{Size: 128, Layers: []shape.LayerCycles{{Layer: "DEV", Cycles: 90}}}}},
	}
	r.Figures = shape.Figures{
		Breakdowns: []shape.Breakdown{mac[0], mac[1], udp[0], udp[1]},
		Tables: []shape.Table{
			{Title: "membench memcpy on a (warm passes; misses per pass)",
				Columns: append(shape.Cols("size", "cold cycles", "warm cycles", "cycles/byte"), shape.Column{Name: "L1 misses"}),
				Rows:    [][]string{{"1KiB", "5000", "2500", "2.441", "64.0"}}},
			{Title: "MAC-level frames", Columns: shape.Cols("payload", "sent", "received"), Rows: [][]string{{"128", "2", "2"}}},
			shape.LayerTable(mac[0]), shape.LayerTable(mac[1]),
			{Title: "UDP echo sweep (cycles)", Columns: []shape.Column{{Name: "size"}, {Name: "rtt", Unit: "us"}},
				Rows: [][]string{{"4", "100.0"}, {"1024", "200.0"}, {"8192", "300.0"}}},
			shape.LayerTable(udp[0]), shape.LayerTable(udp[1]),
		},
	}
	return r
}

func render(t *testing.T, r *report.Result, o report.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, r, o); err != nil {
		t.Fatalf("%s: %v", o.Format, err)
	}
	return b.Bytes()
}

func TestTableFormat(t *testing.T) {
	out := string(render(t, sweep(), report.Options{Format: report.FormatTable}))
	for _, want := range []string{
		`experiment "sweep"  seed 3  complete`,
		"UDP send by layer (mean cycles per message",
		// Layers in stack order with the total, values mean cycles.
		"size  APPL  UDP   IP  DEV  DMA  total",
		"   4   100  150  250  200  300   1000",
		"8192   300  450  750  600  900   3000",
		"UDP receive by layer",
		"size  UDP   IP   DEV   DMA  KERN  total",
		"1024  500  600   800  1400   700   4000",
		"MAC send by layer (mean cycles per frame",
		"payload  APPL  DEV  total",
		"membench memcpy on a",
		"L1 misses",
		"UDP echo sweep",
		"size  rtt us", // a column's unit follows its name
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCSVFormat(t *testing.T) {
	out := render(t, sweep(), report.Options{Format: report.FormatCSV})
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], report.CSVHeader) {
		t.Errorf("header %q", rows[0])
	}
	// MAC: 2 send layers + 1 receive layer; UDP: 3 sizes x 2 directions
	// x (5 layers + 4 summary figures).
	if got, want := len(rows)-1, 2+1+3*2*(5+4); got != want {
		t.Errorf("%d rows, want %d:\n%s", got, want, out)
	}
	for _, want := range [][]string{
		{"MAC", "send", "128", "APPL", "mean", "50"},
		{"UDP", "send", "4", "APPL", "mean", "100"},
		{"UDP", "send", "4", "UDP", "mean", "150"},
		{"UDP", "receive", "8192", "KERN", "mean", "1050"},
		{"UDP", "receive", "1024", "total", "median", "4000"},
		{"UDP", "send", "8192", "total", "max", "3600"},
	} {
		if !slices.ContainsFunc(rows, func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("no row %q", want)
		}
	}
	// The order is fixed: layers follow the stack, then the totals.
	if !slices.Equal(rows[4], []string{"UDP", "send", "4", "APPL", "mean", "100"}) ||
		!slices.Equal(rows[8], []string{"UDP", "send", "4", "DMA", "mean", "300"}) ||
		!slices.Equal(rows[9], []string{"UDP", "send", "4", "total", "mean", "1000"}) {
		t.Errorf("rows out of order:\n%s", out)
	}
	if again := render(t, sweep(), report.Options{Format: report.FormatCSV}); !bytes.Equal(out, again) {
		t.Error("CSV differs between renderings")
	}
}

func TestJSONFormat(t *testing.T) {
	out := render(t, sweep(), report.Options{Format: report.FormatJSON})
	got, err := report.ReadJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(out), string(render(t, got, report.Options{Format: report.FormatJSON}))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !bytes.HasPrefix(out, []byte("{\n  \"schema\"")) {
		t.Errorf("not indented: %.40q", out)
	}
}

// xmlText decodes doc as XML to its end and returns its character data.
func xmlText(t *testing.T, doc []byte) (text string, elements map[string]int) {
	t.Helper()
	elements = map[string]int{}
	var sb strings.Builder
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elements[tok.Name.Local]++
		case xml.CharData:
			sb.Write(tok)
			sb.WriteByte('\n')
		}
	}
	return sb.String(), elements
}

func TestSVGFormat(t *testing.T) {
	for _, c := range []report.Chart{report.ChartLayers, report.ChartLatency} {
		o := report.Options{Format: report.FormatSVG, Chart: c}
		out := render(t, sweep(), o)
		if again := render(t, sweep(), o); !bytes.Equal(out, again) {
			t.Errorf("%s: SVG differs between renderings", c)
		}
		text, elems := xmlText(t, out)
		if elems["svg"] != 1 || elems["text"] == 0 || elems["path"] == 0 {
			t.Errorf("%s: elements %v", c, elems)
		}
		var want []string
		switch c {
		case report.ChartLayers:
			// The legend names the layers; a panel per protocol and
			// direction, sizes in bytes and KiB.
			want = []string{"APPL", "UDP", "IP", "DEV", "DMA", "KERN",
				"UDP send", "UDP receive", "MAC send", "mean cycles per message", "mean cycles per frame", "1 KiB", "8 KiB"}
		case report.ChartLatency:
			// A panel per direction, a line per protocol.
			want = []string{"send", "receive", "UDP", "MAC", "message size (log scale)", "128 B", "1 KiB", "8 KiB"}
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: SVG lacks %q", c, w)
			}
		}
	}
}

func TestPNGFormat(t *testing.T) {
	for _, c := range []report.Chart{report.ChartLayers, report.ChartLatency} {
		out := render(t, sweep(), report.Options{Format: report.FormatPNG, Chart: c, Size: report.ChartSize{Width: 640, Height: 480}})
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
			t.Errorf("%s: %v, want 640x480", c, b)
		}
		colored := 0
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r != g || g != bl {
					colored++
				}
			}
		}
		if colored < 500 {
			t.Errorf("%s: only %d coloured pixels", c, colored)
		}
	}
}

// voidElements have no end tag in HTML.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true,
	"hr": true, "img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// checkBalanced checks that every element of doc is closed, in order.
func checkBalanced(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	var stack []string
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				t.Fatal(z.Err())
			}
			if len(stack) > 0 {
				t.Errorf("unclosed elements %v", stack)
			}
			return counts
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			counts[string(name)]++
			if tt == html.StartTagToken && !voidElements[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

func TestHTMLFormat(t *testing.T) {
	out := render(t, sweep(), report.Options{Format: report.FormatHTML})
	if !bytes.HasPrefix(out, []byte("<!DOCTYPE html>\n")) {
		t.Errorf("no doctype: %.40q", out)
	}
	counts := checkBalanced(t, out)
	// Both charts inline, the layers, and the hosts, membench, MAC (3)
	// and UDP (3) tables.
	if counts["svg"] != 2 || counts["table"] != 9 || counts["img"] != 0 || counts["script"] != 0 || counts["link"] != 0 {
		t.Errorf("elements %v", counts)
	}
	s := string(out)
	for _, want := range []string{
		"<title>simkron report: sweep</title>", "<style>", `<dd class="ok">complete</dd>`,
		`<figure id="chart-layers"`, `<figure id="chart-latency"`,
		"<th>APPL</th><th>UDP</th><th>IP</th><th>DEV</th><th>DMA</th><th>total</th>",
		"<td>8192</td><td>300</td>", ">UDP send</text>",
		// The layers defined, each in its colour; the columns too.
		`<section id="layers">`, "<td>KERN</td><td>kernel", "background: #66CCEE", "<dt>total</dt><dd>the sum of the layers",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// Nothing is fetched: no URLs but the SVG namespaces.
	for _, bad := range []string{"src=", "href=", "url(", "@import"} {
		if strings.Contains(s, bad) {
			t.Errorf("HTML has %q", bad)
		}
	}
	// An HTML5 parser finds the charts as SVG elements.
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	svgs := 0
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "svg" && n.Namespace == "svg" {
			svgs++
		}
	}
	if svgs != 2 { // layers and latency; a sweep has no ttcp progress
		t.Errorf("%d SVG elements in the parsed document", svgs)
	}
}

// A chart the workload defines is drawn under its name: here a
// time-sequence graph of two runs, whole and over its first second.
func TestWorkloadChart(t *testing.T) {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "ttcp", Complete: true}}
	ch := shape.Chart{Name: "progress", Caption: "bytes against time"}
	for _, limit := range []float64{0, 1} {
		p := shape.Plot{Title: "bytes at the receiver", XLabel: "seconds", YLabel: "bytes", XMin: shape.Ptr(0), YMin: shape.Ptr(0)}
		if limit > 0 {
			p.Title, p.XMax = "the first 1 s", shape.Ptr(limit)
		}
		for i, name := range []string{"stall", "stream"} {
			l := shape.Line{Label: name, Step: true}
			for j := range 50 {
				if x := float64(j) * 0.05 * float64(1+9*(1-i)); limit == 0 || x <= limit {
					l.Points = append(l.Points, shape.XY{X: x, Y: float64(j * 6144)})
				}
			}
			p.Lines = append(p.Lines, l)
		}
		ch.Plots = append(ch.Plots, p)
	}
	r.Figures.Charts = []shape.Chart{ch}
	if got := report.ChartNames(r); !slices.Equal(got, []report.Chart{"progress"}) {
		t.Errorf("charts %v", got)
	}
	out := render(t, r, report.Options{Format: report.FormatSVG, Chart: "progress"})
	text, elems := xmlText(t, out)
	if elems["path"] == 0 || !strings.Contains(text, "stall") || !strings.Contains(text, "stream") || !strings.Contains(text, "first 1 s") {
		t.Errorf("progress chart: elements %v, text %q", elems, text)
	}
	// The default chart is the result's first.
	if def := render(t, r, report.Options{Format: report.FormatSVG}); !bytes.Equal(def, out) {
		t.Error("the default chart is not the result's own")
	}
	html := string(render(t, r, report.Options{Format: report.FormatHTML}))
	if !strings.Contains(html, `<figure id="chart-progress"`) || !strings.Contains(html, "<figcaption>bytes against time</figcaption>") {
		t.Errorf("HTML lacks the chart and its caption")
	}
	err := report.Write(io.Discard, &report.Result{Header: report.Header{Schema: report.Schema, Workload: "udp"}}, report.Options{Format: report.FormatSVG, Chart: "progress"})
	if err == nil || !strings.Contains(err.Error(), `unknown chart "progress"`) {
		t.Errorf("progress chart of a result without it: %v", err)
	}
}

// Grouped stacked bars: a bar per group side by side in each category,
// each a stack of its parts, one legend entry per part label.
func TestBarsChart(t *testing.T) {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "compare", Complete: true}}
	bp := shape.BarPlot{Title: "send: UDP | TCP", XLabel: "message size (bytes)", YLabel: "cycles", Categories: []string{"4", "1024"}}
	for i, proto := range []string{"UDP", "TCP"} {
		bp.Groups = append(bp.Groups, shape.BarGroup{Label: proto, Parts: []shape.BarStack{
			{Label: proto, Values: []float64{100, 900 + float64(i)*100}}, {Label: "IP", Values: []float64{300, 400}}}})
	}
	r.Figures.Bars = []shape.Bars{{Name: "compare", Caption: "protocols side by side", Plots: []shape.BarPlot{bp}}}
	if got := report.ChartNames(r); !slices.Equal(got, []report.Chart{"compare"}) {
		t.Errorf("charts %v", got)
	}
	text, elems := xmlText(t, render(t, r, report.Options{Format: report.FormatSVG, Chart: "compare"}))
	for _, want := range []string{"send: UDP | TCP", "UDP", "TCP", "IP", "1024"} {
		if !strings.Contains(text, want) {
			t.Errorf("bars lack %q", want)
		}
	}
	// Two groups of two parts in two categories: eight bars, and three
	// legend swatches (UDP, TCP, IP once each).
	if elems["path"] < 8+3 {
		t.Errorf("elements %v", elems)
	}
	html := string(render(t, r, report.Options{Format: report.FormatHTML}))
	if !strings.Contains(html, `<figure id="chart-compare"`) || !strings.Contains(html, "<figcaption>protocols side by side") {
		t.Errorf("HTML lacks the bars and their caption")
	}
}

// Cost splits are tabulated by their workload and drawn as pies, with
// each category's share.
func TestSplitsChart(t *testing.T) {
	r := &report.Result{Header: report.Header{Schema: report.Schema, Workload: "top", Complete: true}}
	for _, who := range []string{"originator", "recipient"} {
		r.Figures.Splits = append(r.Figures.Splits, shape.Split{Title: "LLC at the " + who, Unit: "cycles",
			Categories: []shape.Category{{Name: "memory copy", Value: 500}, {Name: "checksum", Value: 0},
				{Name: "memory management", Value: 250}, {Name: "task scheduling", Value: 150}, {Name: "others", Value: 100}}})
	}
	if got := report.ChartNames(r); !slices.Equal(got, []report.Chart{report.ChartSplits}) {
		t.Errorf("charts %v", got)
	}
	out := render(t, r, report.Options{Format: report.FormatSVG, Chart: report.ChartSplits})
	text, elems := xmlText(t, out)
	for _, want := range []string{"LLC at the originator", "LLC at the recipient", "memory copy (50.0%)", "checksum (0.0%)", "25%", "15%"} {
		if !strings.Contains(text, want) {
			t.Errorf("pie lacks %q", want)
		}
	}
	if elems["path"] < 8 { // four wedges with a value, twice
		t.Errorf("elements %v", elems)
	}
	png := render(t, r, report.Options{Format: report.FormatPNG, Chart: report.ChartSplits, Size: report.ChartSize{Width: 800, Height: 400}})
	if len(png) < 1000 {
		t.Errorf("PNG of %d bytes", len(png))
	}
	tab := r.Figures.Splits[0].Table()
	if got := tab.Rows[0]; !slices.Equal(got, []string{"memory copy", "500", "50.0"}) {
		t.Errorf("split table row %q", got)
	}
}

// A result with nothing split by layer has no charts: the chart formats
// say so, the others still render.
func TestNoChartData(t *testing.T) {
	r := sweep()
	r.Figures.Breakdowns = nil
	for _, f := range []report.Format{report.FormatSVG, report.FormatPNG} {
		if err := report.Write(io.Discard, r, report.Options{Format: f}); !errors.Is(err, report.ErrNoChartData) {
			t.Errorf("%s: %v, want ErrNoChartData", f, err)
		}
		if err := report.Write(io.Discard, r, report.Options{Format: f, Chart: report.ChartLayers}); !errors.Is(err, report.ErrNoChartData) {
			t.Errorf("%s layers: %v, want ErrNoChartData", f, err)
		}
	}
	out := string(render(t, r, report.Options{Format: report.FormatHTML}))
	if strings.Contains(out, "<svg") || !strings.Contains(out, "membench memcpy on a") {
		t.Errorf("HTML without charts:\n%s", out)
	}
	if err := report.Write(io.Discard, r, report.Options{Format: "xls"}); err == nil {
		t.Error("format xls accepted")
	}
	if err := report.Write(io.Discard, r, report.Options{Format: report.FormatSVG, Chart: "pie"}); err == nil {
		t.Error("chart pie accepted")
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "result.json")
	var b bytes.Buffer
	sweep().WriteJSON(&b)
	os.WriteFile(good, b.Bytes(), 0o644)
	if r, err := report.ReadFile(good); err != nil || r.Experiment != "sweep" {
		t.Fatalf("ReadFile: %v", err)
	}
	for name, content := range map[string]string{
		"missing.json":  "",
		"other.json":    `{"name": "x"}`,
		"schema.json":   `{"schema": "other/1"}`,
		"v2.json":       `{"schema": "simkron.result/2", "udp": []}`,
		"trailing.json": b.String() + "{}",
		"text.json":     "hello",
	} {
		path := filepath.Join(dir, name)
		if content != "" {
			os.WriteFile(path, []byte(content), 0o644)
		}
		_, err := report.ReadFile(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%s: %v, want an error naming the file", name, err)
		}
	}
}
