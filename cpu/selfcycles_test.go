package cpu_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/cpu"
)

// An inherit symbol called from two layers has its self cycles split by
// the layer of each call; the table agrees with SymbolCycles and
// LayerCycles, and an interrupt handler's cycles stay with its own
// symbols.
func TestSelfCyclesSplitInheritByLayer(t *testing.T) {
	r := newRig(t)
	syms := cpu.NewSymbolTable(0x1000, nil)
	llc := syms.Define(cpu.Def{Name: "llc_send", Layer: cpu.LayerLLC, Instructions: 10})
	clns := syms.Define(cpu.Def{Name: "clnp_output", Layer: cpu.LayerCLNS, Instructions: 20})
	alloc := syms.Define(cpu.Def{Name: "mm_alloc", Layer: cpu.LayerInherit, Instructions: 7})
	isr := syms.Define(cpu.Def{Name: "isr", Layer: cpu.LayerMAC, Instructions: 3})
	line, err := r.c.Line(2, true)
	if err != nil {
		t.Fatal(err)
	}
	r.c.SetHandler(2, "nic", func() { r.c.Call(isr, func() { r.c.Call(alloc, func() { r.c.Charge(1) }) }) })
	x := r.c.NewContext("main", cpu.KindThread, func(*cpu.Context) {
		r.c.Charge(5) // before enabling: not in the table
		r.c.EnableSelfCycles()
		r.c.Call(clns, func() {
			r.c.Call(alloc, func() { r.c.Charge(100) })
			r.c.Call(llc, func() {
				r.c.Call(alloc, func() {
					line.Pulse()
					r.c.Charge(1000)
					r.c.Sync()
				})
			})
		})
		r.c.Sync()
		r.c.Halt()
	})
	r.c.Start(x)
	r.k.Run()
	got := map[string]int64{}
	for _, e := range r.c.SelfCycles() {
		got[e.Symbol.Name+"/"+string(e.Layer)] += e.Cycles
	}
	// No caches are touched by Charge; fetch stalls are part of each
	// symbol's self cycles, so compare with SymbolCycles.
	by, _ := r.c.SymbolCycles()
	want := map[string]int64{
		"clnp_output/CLNS": by[clns.Index()],
		"llc_send/LLC":     by[llc.Index()],
		"isr/MAC":          by[isr.Index()],
	}
	if got["mm_alloc/CLNS"] < 100 || got["mm_alloc/LLC"] < 1000 || got["mm_alloc/MAC"] < 1 {
		t.Errorf("mm_alloc split %v: want at least 100 in CLNS, 1000 in LLC, 1 in MAC", got)
	}
	if s := got["mm_alloc/CLNS"] + got["mm_alloc/LLC"] + got["mm_alloc/MAC"]; s != by[alloc.Index()] {
		t.Errorf("mm_alloc split sums to %d, SymbolCycles says %d", s, by[alloc.Index()])
	}
	for k := range got {
		if strings.HasPrefix(k, "mm_alloc") {
			delete(got, k)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("self cycles (-want +got):\n%s", d)
	}
}
