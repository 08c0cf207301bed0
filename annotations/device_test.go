package annotations_test

import (
	"fmt"
	"strings"
	"testing"
)

// Register accesses, string transfers and frames sent are annotation
// points of a device: their counts match the card's and the driver's
// figures.
func TestDeviceAccessPoints(t *testing.T) {
	exp := loadUDP(t, []int{4, 2048}, 3)
	r := simulate(t, exp, script("dev.tcl", `
annotation set device pcA.nic0 read     { incr ::n(read) ; if {[io reg] == 7} { incr ::n(isr) } }
annotation set pc ei_interrupt:START    { if {[host] eq "pcA"} { incr ::n(isrbits) [expr {[dev reg nic0 7] != 0}] ; incr ::n(hz) [expr {[dev reg timer0 8] == 100}] } }
annotation set device pcA.nic0 write    { incr ::n(write) }
annotation set device pcA.nic0 dmastart { incr ::n(start) ; bucket add dmabytes [io bytes] }
annotation set device pcA.nic0 dmaend   { incr ::n(end) }
annotation set device pcA.nic0 sent     { incr ::n(sent) }
annotation set sim exit { foreach k [lsort [array names ::n]] { puts "$k $::n($k)" } }
`), "")
	if r.finish != nil {
		t.Fatal(r.finish)
	}
	out := r.e.Output()
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var k string
		var v int
		if _, err := fmt.Sscan(line, &k, &v); err == nil {
			got[k] = v
		}
	}
	var card, port uint64
	for _, h := range r.res.Hosts {
		if h.Name != "pcA" {
			continue
		}
		for _, d := range h.Devices {
			for _, c := range d.Counters {
				switch c.Name {
				case "card.tx_frames":
					card = c.Value
				case "wire.tx_frames":
					port = c.Value
				}
			}
		}
	}
	if got["sent"] == 0 || uint64(got["sent"]) != card || card != port {
		t.Errorf("sent annotations %d, card sent %d, wire sent %d", got["sent"], card, port)
	}
	if got["start"] == 0 || got["start"] != got["end"] {
		t.Errorf("string transfers: %d starts, %d ends", got["start"], got["end"])
	}
	if got["read"] == 0 || got["write"] == 0 || got["isr"] == 0 || got["isr"] >= got["read"] {
		t.Errorf("register accesses: %v", got)
	}
	// Peeking ISR at the handler's start sees the cause of every
	// interrupt; the timer's HZ register reads 100.
	if got["isrbits"] == 0 || got["hz"] != got["isrbits"] {
		t.Errorf("dev reg: %d handlers saw ISR bits, %d read HZ 100", got["isrbits"], got["hz"])
	}
}
