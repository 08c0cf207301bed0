package stats_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/stats"
)

type inner struct {
	Hits uint32 `stat:"hits" help:"lookups that hit"`
}

type sample struct {
	TxFrames uint64 `stat:"tx_frames" help:"frames sent"`
	Busy     int64  `stat:"busy_ps" help:"time busy, in picoseconds"`
	Peak     int    `stat:"peak" help:"most frames queued"`
	Cache    inner  `stat:"cache"`
	Debug    string `stat:"-"`
	hidden   uint64
}

func TestWalk(t *testing.T) {
	got := stats.Walk("hostA.nic0", &sample{TxFrames: 3, Busy: 70, Peak: 2, Cache: inner{Hits: 9}, hidden: 1})
	want := []stats.Counter{
		{Name: "hostA.nic0.tx_frames", Help: "frames sent", Value: 3},
		{Name: "hostA.nic0.busy_ps", Help: "time busy, in picoseconds", Value: 70},
		{Name: "hostA.nic0.peak", Help: "most frames queued", Value: 2},
		{Name: "hostA.nic0.cache.hits", Help: "lookups that hit", Value: 9},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Walk (-want +got):\n%s", d)
	}
	if got := stats.Walk("x", (*sample)(nil)); got != nil {
		t.Errorf("a nil group has counters: %v", got)
	}
	desc := stats.Describe("", sample{})
	if len(desc) != 4 || desc[3].Name != "cache.hits" || desc[0].Value != 0 {
		t.Errorf("Describe: %v", desc)
	}
	g := stats.WalkGroups("h", []stats.Group{{Name: "card", Value: inner{Hits: 1}}, {Name: "absent"}, {Value: inner{Hits: 2}}})
	if len(g) != 2 || g[0].Name != "h.card.hits" || g[1].Name != "h.hits" || g[1].Value != 2 {
		t.Errorf("WalkGroups: %v", g)
	}
}

// A stats struct that breaks the conventions is a simulator bug.
func TestWalkRefusesBadStructs(t *testing.T) {
	type noTag struct{ N uint64 }
	type noHelp struct {
		N uint64 `stat:"n"`
	}
	type twice struct {
		A uint64 `stat:"n" help:"a"`
		B uint64 `stat:"n" help:"b"`
	}
	type notCount struct {
		S string `stat:"s" help:"a name"`
	}
	type negative struct {
		N int `stat:"n" help:"a count"`
	}
	for _, v := range []any{noTag{}, noHelp{}, twice{}, notCount{}, negative{N: -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%T: no panic", v)
				}
			}()
			stats.Walk("x", v)
		}()
	}
}

func ExampleWalk() {
	type Stats struct {
		TxFrames uint64 `stat:"tx_frames" help:"frames handed to the wire"`
		RxFrames uint64 `stat:"rx_frames" help:"frames stored in the ring"`
	}
	for _, c := range stats.Walk("hostA.nic0.card", Stats{TxFrames: 12, RxFrames: 11}) {
		fmt.Printf("%s %d (%s)\n", c.Name, c.Value, c.Help)
	}
	// Output:
	// hostA.nic0.card.tx_frames 12 (frames handed to the wire)
	// hostA.nic0.card.rx_frames 11 (frames stored in the ring)
}
