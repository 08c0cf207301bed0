package annotations_test

import (
	"strings"
	"testing"

	"simkron/annotations"
)

// heavy sets a body on every point there is, each reading everything a
// body can read.
const heavy = `
proc look {} {
	set ::h([host]) [list [cycles] [now] [cpu] [symbol] [layer]]
	mem read 0x100000 64
	dev reg nic0 7
	dev reg nic0 13
	dev reg timer0 0
	foreach s {cycles interrupts l1.misses l1d.misses l2.misses mem.reads irq.3} { stat $s }
}
foreach s [symbols] {
	annotation set pc $s:START { look; lappend ::depth([host]) [cycles] }
	annotation set pc $s:END {
		set start [lindex $::depth([host]) end]
		set ::depth([host]) [lrange $::depth([host]) 0 end-1]
		bucket add [symbol] [expr {[cycles] - $start}]
	}
}
annotation set exc entry { look; bucket add irq [now] }
annotation set exc exit { look }
annotation set device nic0 frame { bucket add frame [string length [frame]] }
annotation set device nic0 irq { look }
annotation set device nic0 read { look; bucket add reg [io reg] }
annotation set device nic0 write { look; bucket add wval [io value] }
annotation set device nic0 dmastart { look; bucket add dma [io bytes] }
annotation set device nic0 dmaend { look }
annotation set device nic0 sent { bucket add sent [string length [frame]] }
annotation set cycle 1000 { look }
annotation set cycle 33333 { bucket add tick [now] }
annotation set sim exit { puts [bucket report] }
`

func TestAnnotationsDoNotChangeTheRun(t *testing.T) {
	exp := loadUDP(t, []int{4, 1024, 4096}, 10)
	plain := simulate(t, exp, nil, "")
	annotated := simulate(t, exp, script("heavy.tcl", heavy), "")
	if annotated.finish != nil {
		t.Fatal(annotated.finish)
	}
	if annotated.events != plain.events || annotated.trace != plain.trace {
		t.Errorf("event trace: %d events hashing to %x with annotations, %d to %x without",
			annotated.events, annotated.trace, plain.events, plain.trace)
	}
	if a, p := resultJSON(t, annotated.res), resultJSON(t, plain.res); a != p {
		t.Errorf("the result differs with annotations:\n%s\nwithout:\n%s", a, p)
	}
	if n := len(annotated.e.Buckets()); n < 20 {
		t.Errorf("only %d buckets: the heavy script hardly ran", n)
	}
	// The output is deterministic too.
	again := simulate(t, exp, script("heavy.tcl", heavy), "")
	if again.e.Output() != annotated.e.Output() || !strings.Contains(again.e.Output(), "ip_output") {
		t.Errorf("output differs between two identical runs or lacks ip_output:\n%s", annotated.e.Output())
	}
}

// BenchmarkUDPSweep runs the 1 KiB sweep of configs/udp-ne2000.toml (100
// messages) without the engine and with a Tcl body on every symbol's
// entry and exit; their ratio is the cost of annotating everything.
func BenchmarkUDPSweep(b *testing.B) {
	every := []annotations.Source{{Name: "every.tcl", Text: `
foreach s [symbols] {
	annotation set pc $s:START { incr ::n }
	annotation set pc $s:END { incr ::n }
}`}}
	for _, bc := range []struct {
		name    string
		scripts []annotations.Source
	}{{"plain", nil}, {"tcl-every-symbol", every}} {
		b.Run(bc.name, func(b *testing.B) {
			exp := loadUDP(b, []int{1024}, 100)
			var events int
			for b.Loop() {
				r := simulate(b, exp, bc.scripts, "")
				if r.finish != nil {
					b.Fatal(r.finish)
				}
				events = r.events
			}
			b.ReportMetric(float64(events), "events/run")
		})
	}
}
