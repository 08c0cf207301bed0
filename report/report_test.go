package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/report"
	"simkron/stack/apps/macbench"
	"simkron/stack/apps/udpbench"
)

func sample() *report.Result {
	return &report.Result{
		Schema: report.Schema, Version: "test", Experiment: "x", Seed: 3, Complete: true,
		SimTimePS: 2_000_000_000, Events: 10, Workload: "udp",
		Hosts: []report.Host{{Name: "a", Machine: "m", ClockHz: 33_000_000,
			CPU: report.CPU{Cycles: 1000, IdleCycles: 250}}},
		Segments: []report.Segment{{Name: "lan0", Rate: 10_000_000, Mode: "shared", Frames: 4, BusyPS: 1_000_000_000}},
		UDP: []udpbench.Row{{Size: 4, Packets: 1, Messages: 2,
			Send:       udpbench.Summary{N: 2, Mean: 10, Min: 9, Median: 10, Max: 11},
			SendLayers: []udpbench.LayerCost{{Layer: "IP", Cycles: 6}, {Layer: "UDP", Cycles: 4}}}},
		Mac: []macbench.Row{{Size: 128, Sent: 2, Received: 2, Send: []macbench.LayerCost{{Layer: "DEV", CyclesPerFrame: 7}}}},
	}
}

// The JSON schema reads back to the same result, and unknown fields are
// refused (the schema is stable).
func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := sample().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	got, err := report.ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample(), got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	bad := strings.Replace(b.String(), `"seed"`, `"sead"`, 1)
	if _, err := report.ReadJSON(strings.NewReader(bad)); err == nil {
		t.Error("an unknown field was accepted")
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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
