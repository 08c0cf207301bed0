package atmtaxi_test

// Hosts built by hand from the DECstation machine files: the tests read
// configs/machines/ds5000-200.toml and ds5000-25.toml with the config
// package, table by table, and assemble CPU, caches, memory, the
// TURBOchannel, the timer and the Yes V2 with its driver from exactly
// those values (machine/ cannot load the files until the device type is
// registered there).

import (
	"testing"

	"simkron/config"
	"simkron/cpu"
	devatm "simkron/devices/atmtaxi"
	"simkron/devices/timer"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/driver/clock"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

type deviceEntry struct {
	Name  string       `toml:"name"`
	Type  string       `toml:"type"`
	Space memory.Space `toml:"space"`
	Base  uint64       `toml:"base"`
	Bus   string       `toml:"bus"`
	IRQ   int          `toml:"irq"`
}

type memoryTable struct {
	Size       sim.Size `toml:"size"`
	KernelText uint64   `toml:"kernel_text"`
}

type infoTable struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
}

// machineFile is a DECstation machine file, decoded.
type machineFile struct {
	Info   infoTable
	CPU    cpu.Params
	Memory memoryTable
	Kernel kernel.Params
	Cache  memory.HierarchyParams
	Buses  []memory.BusParams
	Costs  map[string]int64
	Timer  deviceEntry
	TimerP timer.Params
	ATM    deviceEntry
	ATMP   devatm.Params
	Driver atm.Params
}

var machineCache = map[string]*machineFile{}

func loadMachine(t testing.TB, name string) *machineFile {
	t.Helper()
	if m, ok := machineCache[name]; ok {
		return m
	}
	f, err := config.Parse("../../../configs/machines/" + name + ".toml")
	if err != nil {
		t.Fatal(err)
	}
	m := &machineFile{CPU: cpu.DefaultParams(), Kernel: kernel.DefaultParams(), TimerP: timer.DefaultParams(), ATMP: devatm.DefaultParams(), Driver: atm.DefaultParams()}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(f.DecodeInto(&m.Info, "machine"))
	add(f.DecodeInto(&m.CPU, "cpu"))
	add(f.DecodeInto(&m.Memory, "memory"))
	add(f.DecodeInto(&m.Kernel, "kernel"))
	add(f.DecodeInto(&m.Cache, "cache"))
	add(f.DecodeInto(&m.Buses, "bus"))
	add(f.DecodeInto(&m.Costs, "costs"))
	for _, i := range f.Keys("device") {
		var d deviceEntry
		add(f.DecodePartial(&d, "device", i))
		switch d.Type {
		case "timer":
			m.Timer = d
			add(f.DecodeInto(&m.TimerP, "device", i, "params"))
		case "atmtaxi":
			m.ATM = d
			add(f.DecodeInto(&m.ATMP, "device", i, "params"))
			add(f.DecodeInto(&m.Driver, "device", i, "driver"))
		default:
			t.Fatalf("%s: device type %q", name, d.Type)
		}
	}
	add(f.CheckUnused())
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	if err := m.ATMP.Validate(); err != nil {
		t.Fatalf("%s: atm0 params: %v", name, err)
	}
	machineCache[name] = m
	return m
}

func (m *machineFile) bus(t testing.TB, name string) *memory.Bus {
	for _, b := range m.Buses {
		if b.Name == name {
			return memory.NewBus(b)
		}
	}
	t.Fatalf("no bus %q", name)
	return nil
}

// host is one DECstation with its Yes V2.
type host struct {
	name string
	m    *machineFile
	k    *sim.Scheduler
	sys  *memory.System
	c    *cpu.CPU
	kern *kernel.Kernel
	ns   *netdev.Stack
	dev  *devatm.Device
	drv  *atm.Driver
	ip   *inet.Stack
}

// newHost builds a host from machine file m; dp and ap replace the
// driver's and the board's tables when not nil. Its init thread starts
// the clock and the board.
func newHost(t testing.TB, k *sim.Scheduler, m *machineFile, name string, dp *atm.Params, ap *devatm.Params) *host {
	t.Helper()
	h := &host{name: name, m: m, k: k}
	hier, err := memory.NewHierarchy(m.Cache)
	if err != nil {
		t.Fatal(err)
	}
	h.sys = memory.NewSystem(k, name, memory.NewPhys(m.Memory.Size), hier)
	if h.c, err = cpu.New(k, name+".cpu0", m.CPU, h.sys); err != nil {
		t.Fatal(err)
	}
	syms := cpu.NewSymbolTable(memory.Addr(m.Memory.KernelText), m.Costs)
	if h.kern, err = kernel.Boot(name, h.c, syms, m.Kernel); err != nil {
		t.Fatal(err)
	}
	buses := map[string]*memory.Bus{}
	for _, d := range []deviceEntry{m.Timer, m.ATM} {
		if buses[d.Bus] == nil {
			buses[d.Bus] = m.bus(t, d.Bus)
		}
	}
	tl, _ := h.c.Line(m.Timer.IRQ, false)
	tm, err := timer.New(k, name+".timer0", m.TimerP, tl, h.sys.Guest)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.sys.Devices.Map(memory.Mapping{Name: "timer0", Space: m.Timer.Space, Base: memory.Addr(m.Timer.Base), Size: timer.Size, Dev: tm, Bus: buses[m.Timer.Bus]}); err != nil {
		t.Fatal(err)
	}
	clk := clock.New(h.kern, m.Timer.Space, memory.Addr(m.Timer.Base), m.Timer.IRQ)
	ap2 := m.ATMP
	if ap != nil {
		ap2 = *ap
	}
	al, _ := h.c.Line(m.ATM.IRQ, false)
	h.dev = devatm.New(k, name+".atm0", ap2, al, h.sys)
	if err := h.sys.Devices.Map(memory.Mapping{Name: "atm0", Space: m.ATM.Space, Base: memory.Addr(m.ATM.Base), Size: devatm.Size, Dev: h.dev, Bus: buses[m.ATM.Bus]}); err != nil {
		t.Fatal(err)
	}
	dp2 := m.Driver
	if dp != nil {
		dp2 = *dp
	}
	h.ns = netdev.New(h.kern)
	if h.drv, err = atm.New(h.kern, h.ns, "atm0", m.ATM.Space, memory.Addr(m.ATM.Base), m.ATM.IRQ, dp2); err != nil {
		t.Fatal(err)
	}
	h.kern.Spawn("init", func(*kernel.Thread) {
		clk.Init()
		h.drv.Init()
	})
	return h
}

// withIP puts the Internet layer on the host's ATM interface.
func (h *host) withIP(t testing.TB, addr inet.Addr, p inet.Params) {
	t.Helper()
	var err error
	if h.ip, err = inet.New(h.kern, h.ns, h.drv.Interface().Queue(), addr, inet.Addr{255, 255, 255, 0}, p); err != nil {
		t.Fatal(err)
	}
}

func (h *host) noGuestErrors(t testing.TB) {
	t.Helper()
	if n := h.sys.Guest.Count(); n != 0 {
		t.Errorf("%s: %d guest errors, first: %v", h.name, n, h.sys.Guest.Records()[0])
	}
	if bad := h.kern.Symbols().UnusedOverrides(); len(bad) > 0 {
		t.Errorf("%s: cost overrides name nothing: %v", h.name, bad)
	}
}

// loopCable returns the short loop-back cable of the seed's test.
func loopCable(t testing.TB, net *atmnet.Network, name string) *atmnet.Link {
	t.Helper()
	p := atmnet.DefaultLinkParams()
	p.Propagation = 10 * sim.Nanosecond // 2 m of cable
	l, err := net.NewLoopback(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mbps(bits float64, d sim.Time) float64 { return bits / d.Seconds() / 1e6 }
