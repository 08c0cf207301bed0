package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/report"
)

// A bridged run's result carries its mark, bridges and pacing; they read
// back, and the summary shows them. A run without a bridge has none of
// their keys.
func TestBridgeResult(t *testing.T) {
	if js := writeJSON(t, sample()); bytes.Contains(js, []byte(`"bridges"`)) || bytes.Contains(js, []byte(`"realtime"`)) || bytes.Contains(js, []byte(`"nondeterministic"`)) {
		t.Errorf("a result without a bridge has bridge keys:\n%s", js)
	}
	r := sample()
	r.Nondeterministic = "segment lan0 is bridged to real hosts"
	r.Bridges = []report.Bridge{{Segment: "lan0", TAP: "sk0", Read: 11, Pending: 1, InFrames: 7, InBytes: 700, OutFrames: 8, OutBytes: 800, DroppedBehind: 1, DroppedQueue: 2, QueuePeak: 3, Error: "gone"}}
	r.Realtime = &report.Realtime{MaxLagPS: 2_500_000_000, BehindPS: 1_000_000_000_000, TolerancePS: 1_000_000_000, Arrivals: 7, BehindArrivals: 4, MaxInboxWaitPS: 3_000_000_000, Interrupted: "interrupt"}
	js := writeJSON(t, r)
	got, err := report.ReadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	r.Sections, got.Sections = nil, nil
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"non-deterministic: segment lan0 is bridged to real hosts",
		"  bridge to TAP sk0: 11 frames read, 7 sent in (700 bytes), 8 out (800 bytes); lost: 1 behind, 2 queue full, 0 oversized, 0 runts, 0 aborted, 0 bad FCS, 0 write errors; 1 on their way at the end; queue peak 3",
		"  TAP ERROR: gone",
		"realtime: paced to the wall clock, never ahead of it; fell behind by at most 2.5ms (1s of wall-clock time more than 1ms behind)",
		"7 frames from real hosts, 4 of them while behind",
		"longest wait for the simulation 3ms",
		"ended by interrupt",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
