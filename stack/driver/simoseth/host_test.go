package simoseth_test

// Small hosts built by hand, with the Linux/SimOS study's machine
// (configs/machines/simos-mipsy.toml): a 1 GHz single-issue MIPS core,
// 32 KiB L1 I and D (1-cycle hits), 1 MiB L2 (10 cycles), 32 MiB of memory
// (100 cycles), the SimOS device table (timer at 0xA0E00000, the NIC at
// 0xA0E02000) on a 100 ns system bus, and the NIC's DMA at 1200 MB/s; the
// hosts meet on a 1 Gbit/s Ethernet switch.

import (
	"testing"

	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/devices/timer"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/clock"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

const (
	timerBase = 0xA0E00000
	nicBase   = 0xA0E02000
	timerIRQ  = 7
	nicIRQ    = 3
	// dmaRegion is an uncached region for the rings and, in some tests,
	// the buffers: the top MiB of memory (kseg1 in the study's machine).
	dmaRegion = 31 << 20
	dmaSize   = 1 * sim.MiB
	// etherType of the tests' raw frames (IEEE 802 local experimental).
	etherType = 0x88B6
)

type host struct {
	name string
	k    *sim.Kernel
	c    *cpu.CPU
	sys  *memory.System
	kern *kernel.Kernel
	ns   *netdev.Stack
	card *simoseth.NIC
	drv  *drv.Driver
	port *ethersim.Attachment
	mac  ethersim.MAC
	got  [][]byte // frames delivered to etherType
}

func cacheParams(l2 bool) memory.HierarchyParams {
	c := func(size sim.Size, line sim.Size, hit int64) *memory.CacheParams {
		return &memory.CacheParams{Size: size, Line: line, Assoc: 2, HitLatency: hit, WritePolicy: memory.WriteBack, WriteAllocate: true}
	}
	p := memory.HierarchyParams{L1I: c(32*sim.KiB, 32, 1), L1D: c(32*sim.KiB, 32, 1), MemLatency: 100, MemWriteLatency: 100}
	if l2 {
		p.L2 = c(sim.MiB, 128, 10)
	}
	return p
}

func newHost(t testing.TB, k *sim.Kernel, seg *ethersim.Segment, name string, last byte, cp simoseth.Params, dp drv.Params) *host {
	t.Helper()
	hier, err := memory.NewHierarchy(cacheParams(true))
	if err != nil {
		t.Fatal(err)
	}
	h := &host{name: name, k: k, sys: memory.NewSystem(k, name, memory.NewPhys(32*sim.MiB), hier), mac: ethersim.MAC{2, 0, 0, 0, 0, last}}
	p := cpu.Params{Clock: sim.GHz, CPI: 1, TrapCycles: 60, IRQEntryCycles: 60, IRQExitCycles: 30, SwitchCycles: 150, Lines: 8}
	if h.c, err = cpu.New(k, name+".cpu0", p, h.sys); err != nil {
		t.Fatal(err)
	}
	if h.kern, err = kernel.Boot(name, h.c, cpu.NewSymbolTable(0x80000, nil), kernel.Params{HeapSize: 16 * sim.MiB}); err != nil {
		t.Fatal(err)
	}
	if err := h.sys.AddUncached(dmaRegion, uint64(dmaSize), 100); err != nil {
		t.Fatal(err)
	}
	bus := memory.NewBus(memory.BusParams{Name: "sysbus", AccessTime: 100 * sim.Nanosecond, Width: 4})
	tl, _ := h.c.Line(timerIRQ, false)
	tm, err := timer.New(k, name+".timer0", timer.DefaultParams(), tl, h.sys.Guest)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sys.Devices.Map(memory.Mapping{Name: "timer0", Space: memory.SpaceMem, Base: timerBase, Size: timer.Size, Dev: tm, Bus: bus}); err != nil {
		t.Fatal(err)
	}
	clk := clock.New(h.kern, memory.SpaceMem, timerBase, timerIRQ)
	nl, _ := h.c.Line(nicIRQ, false)
	cp.MAC = h.mac
	h.card = simoseth.New(k, name+".nic0", cp, nl, h.sys)
	if err := h.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceMem, Base: nicBase, Size: simoseth.Size, Dev: h.card, Bus: bus}); err != nil {
		t.Fatal(err)
	}
	if h.port, err = seg.Attach(name+".nic0", h.card, ethersim.FaultParams{}); err != nil {
		t.Fatal(err)
	}
	h.port.OnTxDone = h.card.TxDone
	h.card.SetWire(h.port)
	h.ns = netdev.New(h.kern)
	if h.drv, err = drv.New(h.kern, h.ns, "eth0", nicBase, nicIRQ, dp); err != nil {
		t.Fatal(err)
	}
	h.kern.Spawn("init", func(*kernel.Thread) {
		clk.Init()
		h.drv.Init()
	})
	return h
}

// collect makes h keep every frame of etherType it receives.
func (h *host) collect(t testing.TB) {
	err := h.ns.Register(etherType, func(b netdev.Buf) {
		p := make([]byte, b.Len)
		h.c.Read(b.Addr, p)
		h.got = append(h.got, p)
		b.Free(h.kern)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gigabitSwitch() ethersim.SegmentParams {
	sp := ethersim.DefaultSegmentParams()
	sp.Rate = sim.Gbps
	sp.Mode = ethersim.ModeSwitch
	sp.Propagation = 100 * sim.Nanosecond
	sp.SwitchLatency = sim.Microsecond
	return sp
}

// pair builds hosts a and b on a gigabit switch.
func pair(t testing.TB, cp simoseth.Params, dpA, dpB drv.Params) (*sim.Kernel, *ethersim.Segment, *host, *host) {
	t.Helper()
	k := sim.NewKernel(1)
	seg, err := ethersim.NewNetwork(k).NewSegment("lan0", gigabitSwitch())
	if err != nil {
		t.Fatal(err)
	}
	return k, seg, newHost(t, k, seg, "a", 1, cp, dpA), newHost(t, k, seg, "b", 2, cp, dpB)
}

// runUntil runs the simulation until done reports true, failing after
// limit of simulated time.
func runUntil(t testing.TB, k *sim.Kernel, limit sim.Time, done func() bool) {
	t.Helper()
	k.RunWhile(func() bool { return !done() && k.Now() < limit })
	if !done() {
		t.Fatalf("not done after %v of simulated time", k.Now())
	}
}

func noGuestErrors(t testing.TB, hs ...*host) {
	t.Helper()
	for _, h := range hs {
		if n := h.sys.Guest.Count(); n != 0 {
			t.Errorf("%s: %d guest errors, first: %v", h.name, n, h.sys.Guest.Records()[0])
		}
	}
}
