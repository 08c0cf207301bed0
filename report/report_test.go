package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/report"
	"simkron/report/shape"
)

func sample() *report.Result {
	send := shape.Breakdown{Protocol: "UDP", Direction: shape.Send, SizeName: "size", Unit: "message", What: "inside sendto",
		Points: []shape.Point{{Size: 4, Layers: []shape.LayerCycles{{Layer: "IP", Cycles: 6}, {Layer: "UDP", Cycles: 4}},
			Latency: &shape.Summary{N: 2, Mean: 10, Min: 9, Median: 10, Max: 11}}}}
	mac := shape.Breakdown{Protocol: "MAC", Direction: shape.Send, SizeName: "payload", Unit: "frame", What: "per frame",
		Points: []shape.Point{{Size: 128, Layers: []shape.LayerCycles{{Layer: "DEV", Cycles: 7}}}}}
	return &report.Result{
		Header: report.Header{Schema: report.Schema, Version: "test", Experiment: "x", Seed: 3, Complete: true,
			SimTimePS: 2_000_000_000, Events: 10, Workload: "udp",
			Hosts: []report.HostResult{{Name: "a", Machine: "m", ClockHz: 33_000_000,
				CPU: report.CPU{Cycles: 1000, IdleCycles: 250}}}},
		Sections: []report.Section{{Name: "udp", Value: []map[string]int{{"size": 4, "messages": 2}}}},
		Trailer: report.Trailer{
			Segments: []report.Segment{{Name: "lan0", Rate: 10_000_000, Mode: "shared", Frames: 4, BusyPS: 1_000_000_000}},
			Figures: shape.Figures{
				Breakdowns: []shape.Breakdown{mac, send},
				Tables:     []shape.Table{shape.LayerTable(mac), shape.LayerTable(send)},
				Text:       "a note\n",
			},
		},
	}
}

func writeJSON(t *testing.T, r *report.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The JSON schema reads back to the same result, sections as they were
// written, and unknown fields are refused (the schema is stable).
func TestJSONRoundTrip(t *testing.T) {
	js := writeJSON(t, sample())
	got, err := report.ReadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(js), string(writeJSON(t, got))); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var rows []struct{ Size, Messages int }
	if err := got.Section("udp", &rows); err != nil || len(rows) != 1 || rows[0].Messages != 2 {
		t.Errorf("section udp: %v %v", rows, err)
	}
	if err := got.Section("tcp", &rows); err == nil {
		t.Error("a missing section decoded")
	}
	want := sample()
	want.Sections = nil
	got.Sections = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fixed fields (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]string{
		"unknown field":    strings.Replace(string(js), `"seed"`, `"sead"`, 1),
		"unlisted section": strings.Replace(string(js), `"sections": [`, `"sections": [ "tcp",`, 1),
		"unknown nested":   strings.Replace(string(js), `"cycles": 1000`, `"cycle": 1000`, 1),
		"stray key":        strings.Replace(string(js), `"udp": [`, `"tcp": [], "udp": [`, 1),
	} {
		if bad == string(js) {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := report.ReadJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Sections come between the fixed fields, under their names.
	if i, j, k := bytes.Index(js, []byte(`"sections": [`)), bytes.Index(js, []byte(`"udp": [`)), bytes.Index(js, []byte(`"segments"`)); !(i < j && j < k) {
		t.Errorf("sections out of place:\n%s", js)
	}
}

func TestSummary(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteSummary(&b, sample()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"simulated 2ms in 10 events, complete",
		"cpu: 1000 cycles, 750 busy (75.0%)",
		"segment lan0: 10Mbps shared, 4 frames",
		"busy 50.0% of the run",
		"size  UDP  IP  total", // the send split by layer, in stack order
		"   4    4   6     10",
		"payload  DEV  total",
		"a note",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
