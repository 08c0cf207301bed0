// Package toptest builds a bare TOP host for the tests of the protocol
// machines: a 33 MHz 486-class core with an 8 KiB write-through cache,
// the PC's interval timer and the TOP run-time, no card. Tests run their
// code in the program's start-up (Host.OnStart) and drive the machines
// directly.
package toptest

import (
	"testing"

	"simkron/cpu"
	"simkron/devices/pit"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/osi"
	"simkron/stack/top"
)

// Bare is a host without a network card.
type Bare struct {
	K   *sim.Scheduler
	H   *top.Runtime
	Sys *memory.System
}

// New builds a bare host called name.
func New(t testing.TB, name string) *Bare {
	t.Helper()
	k := sim.NewScheduler(1)
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteThrough}
	hier, err := memory.NewHierarchy(memory.HierarchyParams{L1: l1, MemLatency: 12, MemWriteLatency: 4})
	if err != nil {
		t.Fatal(err)
	}
	sys := memory.NewSystem(k, name, memory.NewPhys(4*sim.MiB), hier)
	c, err := cpu.New(k, name+".cpu0", cpu.Params{Clock: 33 * sim.MHz, CPI: 1.8, IRQEntryCycles: 100, IRQExitCycles: 70, Lines: 16}, sys)
	if err != nil {
		t.Fatal(err)
	}
	irq0, _ := c.Line(0, true)
	if err := sys.Devices.Map(memory.Mapping{Name: "pit", Space: memory.SpaceIO, Base: 0x40, Size: pit.Size,
		Dev: pit.New(k, name+".pit", pit.DefaultParams(), irq0, sys.Guest)}); err != nil {
		t.Fatal(err)
	}
	h, err := top.Boot(name, c, cpu.NewSymbolTable(0x10000, nil), top.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	return &Bare{K: k, H: h, Sys: sys}
}

// Bytes reads a chain's octets (uncharged: the test looks).
func (b *Bare) Bytes(ch osi.Chain) []byte {
	var out []byte
	b.H.Bufs().Pieces(ch, func(a memory.Addr, k int) {
		p := make([]byte, k)
		_ = b.Sys.Phys.Read(a, p)
		out = append(out, p...)
	})
	return out
}

// Chain makes a reception chain holding p (charged, in the program).
func (b *Bare) Chain(p []byte) osi.Chain {
	ch, a := b.H.Bufs().New(osi.Rx, max(len(p), 1))
	if ch != 0 {
		b.H.CPU().Write(a, p)
		if len(p) == 0 {
			b.H.Bufs().Truncate(ch, 0)
		}
	}
	return ch
}

// Held reports the primitive and parameter structures in use.
func (b *Bare) Held() int {
	tp, td, rp, rd := b.H.Mem().StructuresInUse()
	return tp + td + rp + rd
}
