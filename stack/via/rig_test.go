package via_test

// Hosts built by hand for the VIA tests: the Linux/SimOS study's machine
// (values from configs/machines/simos-mipsy.toml, machine_test.go) with
// its bus-master NIC, or the same core with an NE2000 on an ISA-like bus;
// the device layer, the Internet stack and the VIA agent on top.

import (
	"simkron/internal/simostest"
	"testing"

	"simkron/cpu"
	"simkron/devices/ne2000"
	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
	drvne "simkron/stack/driver/ne2000"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/stack/via"
)

type host struct {
	name  string
	k     *sim.Scheduler
	c     *cpu.CPU
	sys   *memory.System
	kern  *kernel.Kernel
	ns    *netdev.Stack
	card  *simoseth.NIC // nil on an NE2000 host
	drv   *drv.Driver
	ne    *drvne.Driver
	port  *ethersim.Attachment
	mac   ethersim.MAC
	ip    inet.Addr
	inet  *inet.Stack
	agent *via.Agent
	nic   *via.Nic
	// onFrame, when set, sees every frame reaching the card (FCS
	// included), before the card does.
	onFrame []func(frame []byte)
	main    *cpu.Symbol
}

type opts struct {
	machine func(m *machineFile) // changes to the machine file's values
	via     via.Params
	ne2000  bool
	faults  ethersim.FaultParams
}

func defaultOpts() opts { return opts{via: via.DefaultParams()} }

// station lets observers see frames before the card.
type station struct {
	h    *host
	card ethersim.Station
}

func (s station) Receive(f []byte) {
	for _, fn := range s.h.onFrame {
		fn(f)
	}
	s.card.Receive(f)
}

var defMain = cpu.Def{Name: "vtest_main", Layer: cpu.LayerAPPL, Instructions: 20, CodeBytes: 128, Why: "the test program's loop"}

func newHost(t testing.TB, k *sim.Scheduler, seg *ethersim.Segment, name string, last byte, o opts) *host {
	t.Helper()
	m := loadMachine(t)
	if o.machine != nil {
		o.machine(&m)
	}
	b := simostest.Boot(t, k, name, m)
	h := &host{name: name, k: k, sys: b.Sys, c: b.CPU, kern: b.Kern,
		mac: ethersim.MAC{2, 0, 0, 0, 0, last}, ip: inet.Addr{10, 0, 0, last}}
	bus, clk := b.Bus, b.Clock
	var err error
	nl, _ := h.c.Line(m.NICIRQ, false)
	h.ns = netdev.New(h.kern)
	var dev int
	var card ethersim.Station
	var initNIC func()
	var wire func(*ethersim.Attachment)
	if o.ne2000 {
		// The NE2000 of configs/machines/r4000.toml: the same place in
		// the address map, every register access and data-port word a
		// system-bus cycle.
		cp := ne2000.DefaultParams()
		cp.MAC = h.mac
		nc := ne2000.New(k, name+".nic0", cp, nl, h.sys.Guest)
		if err := h.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceMem, Base: memory.Addr(m.NICAt), Size: ne2000.Size, Dev: nc, Bus: bus}); err != nil {
			t.Fatal(err)
		}
		dp := drvne.DefaultParams()
		dp.TxBuffers = 2
		if h.ne, err = drvne.New(h.kern, h.ns, "eth0", memory.SpaceMem, memory.Addr(m.NICAt), m.NICIRQ, dp); err != nil {
			t.Fatal(err)
		}
		card, dev, initNIC = nc, h.ne.Queue(), h.ne.Init
		wire = func(p *ethersim.Attachment) { p.OnTxDone = nc.TxDone; nc.SetWire(p) }
	} else {
		m.Card.MAC = h.mac
		h.card = simoseth.New(k, name+".nic0", m.Card, nl, h.sys)
		if err := h.sys.Devices.Map(memory.Mapping{Name: "nic0", Space: memory.SpaceMem, Base: memory.Addr(m.NICAt), Size: simoseth.Size, Dev: h.card, Bus: bus}); err != nil {
			t.Fatal(err)
		}
		if h.drv, err = drv.New(h.kern, h.ns, "eth0", memory.Addr(m.NICAt), m.NICIRQ, m.Driver); err != nil {
			t.Fatal(err)
		}
		card, dev, initNIC = h.card, h.drv.Queue(), h.drv.Init
		wire = func(p *ethersim.Attachment) { p.OnTxDone = h.card.TxDone; h.card.SetWire(p) }
	}
	if h.port, err = seg.Attach(name+".nic0", station{h, card}, o.faults); err != nil {
		t.Fatal(err)
	}
	wire(h.port)
	ip := inet.DefaultParams()
	ip.TCPSendBuffer, ip.TCPRecvBuffer = 64*sim.KiB, 64*sim.KiB
	if h.inet, err = inet.New(h.kern, h.ns, dev, h.ip, inet.Addr{255, 255, 255, 0}, ip); err != nil {
		t.Fatal(err)
	}
	if h.agent, err = via.New(h.kern, h.ns, o.via); err != nil {
		t.Fatal(err)
	}
	h.nic = h.agent.AddNIC(dev)
	h.main = h.kern.Symbols().Define(defMain)
	h.kern.Spawn("init", func(*kernel.Thread) {
		clk.Init()
		initNIC()
	})
	return h
}

func gigabitSwitch() ethersim.SegmentParams {
	sp := ethersim.DefaultSegmentParams()
	sp.Rate = sim.Gbps
	sp.Mode = ethersim.ModeSwitch
	sp.Propagation = 100 * sim.Nanosecond
	sp.SwitchLatency = sim.Microsecond
	return sp
}

// pair builds a client host a and a server host b.
func pair(t testing.TB, oa, ob opts) (*sim.Scheduler, *ethersim.Segment, *host, *host) {
	t.Helper()
	k := sim.NewScheduler(1)
	sp := gigabitSwitch()
	if oa.ne2000 {
		sp = ethersim.DefaultSegmentParams() // 10 Mbit/s shared, as the NE2000's
	}
	seg, err := ethersim.NewNetwork(k).NewSegment("lan0", sp)
	if err != nil {
		t.Fatal(err)
	}
	a := newHost(t, k, seg, "a", 1, oa)
	b := newHost(t, k, seg, "b", 2, ob)
	// Threads still blocked at the end would keep their coroutines.
	t.Cleanup(func() { a.c.Shutdown(); b.c.Shutdown() })
	// ARP is not what is measured: the neighbours are known.
	a.inet.AddNeighbour(b.ip, b.mac)
	b.inet.AddNeighbour(a.ip, a.mac)
	return k, seg, a, b
}

// runUntil runs the simulation until done reports true, failing past
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
