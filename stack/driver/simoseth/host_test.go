package simoseth_test

// Small hosts built by hand with the values of the Linux/SimOS study's
// machine file (configs/machines/simos-mipsy.toml, machine_test.go): CPU,
// caches, memory, kernel, the SimOS device table (timer, NIC) on the
// system bus and the uncached DMA region; each test picks the card's and
// the driver's parameters. The hosts meet on a 1 Gbit/s Ethernet switch.

import (
	"simkron/internal/simostest"
	"testing"

	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

const (
	// dmaRegion is an uncached region for the rings and, in some tests,
	// the buffers: the top MiB of memory (kseg1 in the study's machine).
	dmaRegion = 31 << 20
	dmaSize   = 1 * sim.MiB
	// etherType of the tests' raw frames (IEEE 802 local experimental).
	etherType = 0x88B6
)

type host struct {
	name string
	k    *sim.Scheduler
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

func newHost(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, name string, last byte, cp simoseth.Params, dp drv.Params) *host {
	t.Helper()
	m := loadMachine(t)
	if m.Uncached.Base != dmaRegion || m.Uncached.Size != dmaSize {
		t.Fatalf("the machine file's uncached region moved: %+v", m.Uncached)
	}
	b := simostest.Boot(t, k, name, m)
	h := &host{name: name, k: k, sys: b.Sys, c: b.CPU, kern: b.Kern, mac: ethersim.MAC{2, 0, 0, 0, 0, last}}
	bus, clk := b.Bus, b.Clock
	var err error
	nl, _ := h.c.Line(m.NICIRQ, false)
	cp.MAC = h.mac
	h.card = simoseth.New(k, name+".nic0", cp, nl, h.sys)
	if err := h.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceMem, Base: memory.Addr(m.NICAt), Size: simoseth.Size, Dev: h.card, Bus: bus}); err != nil {
		t.Fatal(err)
	}
	if h.port, err = seg.Attach(name+".nic0", h.card, ethersim.FaultParams{}); err != nil {
		t.Fatal(err)
	}
	h.port.OnTxDone = h.card.TxDone
	h.card.SetWire(h.port)
	h.ns = netdev.New(h.kern)
	if h.drv, err = drv.New(h.kern, h.ns, "eth0", memory.Addr(m.NICAt), m.NICIRQ, dp); err != nil {
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
func pair(t testing.TB, cp simoseth.Params, dpA, dpB drv.Params) (*sim.Scheduler, *ethersim.Segment, *host, *host) {
	return pairOn(t, gigabitSwitch(), cp, dpA, dpB)
}

// pairOn builds hosts a and b on a segment of sp.
func pairOn(t testing.TB, sp ethersim.SegmentParams, cp simoseth.Params, dpA, dpB drv.Params) (*sim.Scheduler, *ethersim.Segment, *host, *host) {
	t.Helper()
	k := sim.NewScheduler(1)
	seg, err := ethersim.NewNetwork(k).NewSegment("lan0", sp)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newHost(t, k, seg, "a", 1, cp, dpA), newHost(t, k, seg, "b", 2, cp, dpB)
	// Threads still blocked at the end would keep their coroutines.
	t.Cleanup(func() { a.c.Shutdown(); b.c.Shutdown() })
	return k, seg, a, b
}

// runUntil runs the simulation until done reports true, failing after
// limit of simulated time.
func runUntil(t testing.TB, k *sim.Scheduler, limit sim.Time, done func() bool) {
	t.Helper()
	simostest.RunUntil(t, k, limit, done)
}

func noGuestErrors(t testing.TB, hs ...*host) {
	t.Helper()
	for _, h := range hs {
		simostest.NoGuestErrors(t, []string{h.name}, h.sys)
	}
}
