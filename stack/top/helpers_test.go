package top_test

// Hosts built by hand as configs/machines/i486dx33.toml describes the
// PC of the TOP measurements: a 33 MHz 486DX (CPI 1.8, interrupt entry
// 100 and exit 70 cycles), an 8 KiB unified write-through L1 of 16-byte
// lines, a 128 KiB direct-mapped write-back board cache (5 cycles),
// DRAM at 12 cycles a line fill and 4 a write, 16 MiB, and a 16-bit ISA
// bus at 1 us a cycle with the NE2000 at 0x300 on IRQ 3. The DOS PC has
// the 8254 at port 0x40 on IRQ 0 where that machine file's Linux host
// has simkron's timer device.

import (
	"testing"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/devices/pit"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/pktdrv"
	"simkron/stack/osi"
	"simkron/stack/osi/clnp"
	"simkron/stack/top"
)

const (
	nicBase = 0x300
	nicIRQ  = 3
	pitBase = 0x40
	textAt  = 0x10000 // the program's code, loaded at 64 KiB
)

// pc is one hand-built PC with the TOP program's pieces.
type pc struct {
	name string
	c    *cpu.CPU
	sys  *memory.System
	card *ne2000.NE2000
	port *ethersim.Attachment
	h    *top.Runtime
	drv  *pktdrv.Driver
	mac  *top.MAC
	llc  *top.LLC
	clns *top.CLNS
	addr ethersim.MAC
	nsap osi.NSAP
}

func i486Params() (cpu.Params, memory.HierarchyParams) {
	l1 := &memory.CacheParams{Size: 8 * sim.KiB, Line: 16, Assoc: 4, HitLatency: 1, WritePolicy: memory.WriteThrough, WriteAllocate: false}
	l2 := &memory.CacheParams{Size: 128 * sim.KiB, Line: 16, Assoc: 1, HitLatency: 5, WritePolicy: memory.WriteBack, WriteAllocate: true}
	return cpu.Params{Clock: 33 * sim.MHz, CPI: 1.8, TrapCycles: 107, IRQEntryCycles: 100, IRQExitCycles: 70, SwitchCycles: 350, Lines: 16},
		memory.HierarchyParams{L1: l1, L2: l2, MemLatency: 12, MemWriteLatency: 4}
}

// machine is what a PC is built from: the core, the caches and memory,
// the ISA bus's cycle, and cost overrides.
type machine struct {
	cpu   cpu.Params
	hier  memory.HierarchyParams
	isa   sim.Time
	costs map[string]int64
	// top, when set, changes the program's memory and managers.
	top func(p *top.Params)
}

func i486Machine() machine {
	cp, hp := i486Params()
	return machine{cpu: cp, hier: hp, isa: sim.Microsecond}
}

// newPC builds a PC; seg nil leaves the card unplugged (loopback).
func newPC(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, name string, last byte, dp pktdrv.Params) *pc {
	t.Helper()
	return newPCOn(t, k, seg, name, last, dp, i486Machine())
}

// newPCOn builds a PC of machine m.
func newPCOn(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, name string, last byte, dp pktdrv.Params, m machine) *pc {
	t.Helper()
	cp, hp := m.cpu, m.hier
	hier, err := memory.NewHierarchy(hp)
	if err != nil {
		t.Fatal(err)
	}
	p := &pc{name: name, addr: ethersim.MAC{2, 0, 0, 0, 0, last}}
	p.sys = memory.NewSystem(k, name, memory.NewPhys(16*sim.MiB), hier)
	if p.c, err = cpu.New(k, name+".cpu0", cp, p.sys); err != nil {
		t.Fatal(err)
	}
	p.c.EnableSelfCycles()
	isa := memory.NewBus(memory.BusParams{Name: "isa", AccessTime: m.isa, Width: 2})
	irq0, _ := p.c.Line(0, true)
	timer := pit.New(k, name+".pit", pit.DefaultParams(), irq0, p.sys.Guest)
	if err := p.sys.Devices.Map(memory.Mapping{Name: "pit", Space: memory.SpaceIO, Base: pitBase, Size: pit.Size, Dev: timer, Bus: isa}); err != nil {
		t.Fatal(err)
	}
	line, _ := p.c.Line(nicIRQ, false)
	np := ne2000.DefaultParams()
	np.MAC = p.addr
	p.card = ne2000.New(k, name+".nic0", np, line, p.sys.Guest)
	if err := p.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceIO, Base: nicBase, Size: ne2000.Size, Dev: p.card, Bus: isa}); err != nil {
		t.Fatal(err)
	}
	if seg != nil {
		if p.port, err = seg.Attach(name+".nic0", p.card, ethersim.FaultParams{}); err != nil {
			t.Fatal(err)
		}
		p.port.OnTxDone = p.card.TxDone
		p.card.SetWire(p.port)
	}
	syms := cpu.NewSymbolTable(textAt, m.costs)
	tp := top.DefaultParams()
	if m.top != nil {
		m.top(&tp)
	}
	if p.h, err = top.Boot(name, p.c, syms, tp); err != nil {
		t.Fatal(err)
	}
	if p.drv, err = pktdrv.New(p.c, syms, name+".pktdrv", memory.SpaceIO, nicBase, nicIRQ, p.h.Static(32), dp); err != nil {
		t.Fatal(err)
	}
	p.h.OnStart(p.drv.Init)
	return p
}

// stack adds the MAC, and LLC and CLNS up to the level the user needs.
func (p *pc) stack(t testing.TB, lv top.Level, cp clnp.Params) {
	t.Helper()
	if lv == top.LevelPktDrv {
		return
	}
	p.mac = p.h.NewMAC(p.drv)
	if lv == top.LevelMAC {
		return
	}
	p.llc = p.h.NewLLC(p.mac)
	if lv == top.LevelLLC {
		return
	}
	cp.NSAP = p.nsap
	var err error
	if p.clns, err = p.h.NewCLNS(p.llc, cp); err != nil {
		t.Fatal(err)
	}
}

// nsapOf is a GOSIP-style NSAP of host last, selector 0x21.
func nsapOf(last byte) osi.NSAP {
	return osi.MustNSAP([]byte{0x47, 0x00, 0x05, 0x80, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, last, 0x21})
}

func noGuestErrors(t testing.TB, ps ...*pc) {
	t.Helper()
	for _, p := range ps {
		if n := p.sys.Guest.Count(); n != 0 {
			t.Errorf("%s: %d guest errors, first: %v", p.name, n, p.sys.Guest.Records()[0])
		}
	}
}
