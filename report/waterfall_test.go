package report_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"simkron/internal/charttest"
	"simkron/report"
	"simkron/sim"
)

// waterfall is a message between two hosts: a send, a frame each way
// and a receive, with the workload's measurements under each host.
func waterfall() *report.Waterfall {
	us := int64(sim.Microsecond)
	return &report.Waterfall{
		Title: "message udp:1024:3", From: 1000 * us, To: 1055 * us,
		Rows: []report.WaterfallRow{
			{Name: "mipsA", Bars: []report.WaterfallBar{
				{From: 1000 * us, To: 1001 * us, Layer: "APPL", Detail: "APPL: sys_sendto"},
				{From: 1001 * us, To: 1002 * us, Layer: "UDP"},
				{From: 1002 * us, To: 1003 * us, Layer: "IP"},
				{From: 1003 * us, To: 1004 * us, Layer: "DEV"},
				{From: 1004 * us, To: 1049 * us, Layer: report.Halted},
				{From: 1049 * us, To: 1050 * us, Layer: "KERN"},
				{From: 1050 * us, To: 1055 * us, Layer: "UDP"},
			}, Spans: []report.WaterfallSpan{
				{From: 1000 * us, To: 1004 * us, Label: "send 3,967 cycles"},
				{From: 1049 * us, To: 1055 * us, Label: "receive 5,877 cycles"},
			}},
			{Name: "lan0", Wire: true, Bars: []report.WaterfallBar{
				{From: 1003 * us, To: 1021 * us, Layer: "wire", Label: "mipsA → mipsB", Sender: "mipsA", Receiver: "mipsB"},
				{From: 1031 * us, To: 1049 * us, Layer: "wire", Label: "mipsB → mipsA", Sender: "mipsB", Receiver: "mipsA"},
			}},
			{Name: "mipsB", Bars: []report.WaterfallBar{
				{From: 1000 * us, To: 1021 * us, Layer: report.Halted},
				{From: 1021 * us, To: 1031 * us, Layer: "UDP"},
				{From: 1031 * us, To: 1055 * us, Layer: report.Halted},
			}, Spans: []report.WaterfallSpan{
				{From: 1021 * us, To: 1027 * us, Label: "receive 5,850 cycles"},
				{From: 1027 * us, To: 1031 * us, Label: "send 3,940 cycles"},
			}},
		},
	}
}

// The waterfall is readable at the HTML report's width and narrower: no
// two texts overlap, none runs off the canvas; every bar is drawn with
// its colour, the frames joined to their hosts.
func TestWaterfallReadable(t *testing.T) {
	for _, width := range []int{1100, 700, 400} {
		var b bytes.Buffer
		if err := report.WriteWaterfallSVG(&b, waterfall(), width); err != nil {
			t.Fatal(err)
		}
		problems, err := charttest.Problems(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("at %d wide: %s", width, p)
		}
		svg := b.String()
		for _, want := range []string{`fill="#E69F00"`, `fill="#000000"`, "message udp:1024:3", ">lan0<", "stroke-dasharray=\"2,2\"", "<title>APPL: sys_sendto, 1us</title>"} {
			if !strings.Contains(svg, want) {
				t.Errorf("at %d wide, the SVG lacks %q", width, want)
			}
		}
		if width == 1100 {
			for _, want := range []string{"send 3,967 cycles", "receive 5,877 cycles", "receive 5,850 cycles", "send 3,940 cycles", "mipsA → mipsB"} {
				if !strings.Contains(svg, want) {
					t.Errorf("the SVG lacks the label %q", want)
				}
			}
		}
	}
	var b bytes.Buffer
	err := report.WriteWaterfallSVG(&b, &report.Waterfall{}, 0)
	if !errors.Is(err, report.ErrNoChartData) {
		t.Errorf("an empty waterfall: %v", err)
	}
	// Through Write: the svg chart "waterfall", and the page's section.
	if err := report.Write(&b, sample(), report.Options{Format: report.FormatSVG, Chart: report.ChartWaterfall}); !errors.Is(err, report.ErrNoChartData) {
		t.Errorf("the waterfall chart without a waterfall: %v", err)
	}
	b.Reset()
	if err := report.Write(&b, sample(), report.Options{Format: report.FormatHTML, Waterfall: waterfall()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<section id="waterfall">`) || !strings.Contains(b.String(), "mipsB → mipsA") {
		t.Error("the page has no waterfall")
	}
}
