// Package simostest reads the Linux/SimOS study's machine file for tests
// that build its hosts by hand (the simoseth driver's, the VIA agent's).
// Layer: none; used by tests only (outside stack/, whose packages may not
// depend on the Ethernet model the card's package uses).
package simostest

import (
	"testing"

	"simkron/config"
	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/driver/clock"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/kernel"
)

// MachineFile is what hand-built hosts take from the study's machine
// file, configs/machines/simos-mipsy.toml, decoded strictly into the
// components' own Params, so that the driver's and the VIA agent's tests need no machine/ (which
// builds the same hosts from the file: machine/parts/ethernet/simoseth.go).
type MachineFile struct {
	CPU    cpu.Params
	Cache  memory.HierarchyParams
	Memory struct {
		Size       sim.Size `toml:"size"`
		KernelText uint64   `toml:"kernel_text"`
	}
	Kernel   kernel.Params
	Bus      memory.BusParams
	Uncached struct {
		Name    string   `toml:"name"`
		Base    uint64   `toml:"base"`
		Size    sim.Size `toml:"size"`
		Latency int64    `toml:"latency"`
	}
	Timer    timer.Params
	TimerAt  uint64
	TimerIRQ int
	Card     simoseth.Params
	Driver   drv.Params
	NICAt    uint64
	NICIRQ   int
	Costs    map[string]int64
}

// Load reads the machine file at path (the study's,
// configs/machines/simos-mipsy.toml), failing t on any problem.
func Load(t testing.TB, path string) MachineFile {
	t.Helper()
	f, err := config.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	m := MachineFile{CPU: cpu.DefaultParams(), Kernel: kernel.DefaultParams(), Timer: timer.DefaultParams(),
		Card: simoseth.DefaultParams(), Driver: drv.DefaultParams()}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(f.DecodeInto(&m.CPU, "cpu"))
	check(f.DecodeInto(&m.Cache, "cache"))
	check(f.DecodeInto(&m.Memory, "memory"))
	check(f.DecodeInto(&m.Kernel, "kernel"))
	check(f.DecodeInto(&m.Bus, "bus", "0"))
	check(f.DecodeInto(&m.Uncached, "uncached", "0"))
	check(f.DecodeInto(&m.Costs, "costs"))
	for _, i := range f.Keys("device") {
		var d struct {
			Name  string `toml:"name"`
			Type  string `toml:"type"`
			Space string `toml:"space"`
			Base  uint64 `toml:"base"`
			Bus   string `toml:"bus"`
			IRQ   int    `toml:"irq"`
		}
		check(f.DecodePartial(&d, "device", i))
		switch d.Type {
		case "timer":
			check(f.DecodeInto(&m.Timer, "device", i, "params"))
			m.TimerAt, m.TimerIRQ = d.Base, d.IRQ
		case "simoseth":
			check(f.DecodeInto(&m.Card, "device", i, "params"))
			check(f.DecodeInto(&m.Driver, "device", i, "driver"))
			m.NICAt, m.NICIRQ = d.Base, d.IRQ
		}
	}
	check(m.Card.Validate())
	check(m.Driver.Validate())
	return m
}

// Base is a host of the machine file without its NIC: its memory system,
// CPU, booted kernel, system bus and the timer with the kernel's clock
// driver (Init it on a kernel thread).
type Base struct {
	Sys   *memory.System
	CPU   *cpu.CPU
	Kern  *kernel.Kernel
	Bus   *memory.Bus
	Clock *clock.Driver
}

// Boot builds host name's Base on k from m, failing t on any error.
func Boot(t testing.TB, k *sim.Scheduler, name string, m MachineFile) Base {
	t.Helper()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	hier, err := memory.NewHierarchy(m.Cache)
	check(err)
	b := Base{Sys: memory.NewSystem(k, name, memory.NewPhys(m.Memory.Size), hier), Bus: memory.NewBus(m.Bus)}
	b.CPU, err = cpu.New(k, name+".cpu0", m.CPU, b.Sys)
	check(err)
	b.Kern, err = kernel.Boot(name, b.CPU, cpu.NewSymbolTable(memory.Addr(m.Memory.KernelText), m.Costs), m.Kernel)
	check(err)
	check(b.Sys.AddUncached(memory.Addr(m.Uncached.Base), uint64(m.Uncached.Size), m.Uncached.Latency))
	tl, _ := b.CPU.Line(m.TimerIRQ, false)
	tm, err := timer.New(k, name+".timer0", m.Timer, tl, b.Sys.Guest)
	check(err)
	check(b.Sys.Devices.Map(memory.Mapping{Name: "timer0", Space: memory.SpaceMem, Base: memory.Addr(m.TimerAt), Size: timer.Size, Dev: tm, Bus: b.Bus}))
	b.Clock = clock.New(b.Kern, memory.SpaceMem, memory.Addr(m.TimerAt), m.TimerIRQ)
	return b
}

// RunUntil runs the simulation until done reports true, failing t past
// limit of simulated time.
func RunUntil(t testing.TB, k *sim.Scheduler, limit sim.Time, done func() bool) {
	t.Helper()
	k.RunWhile(func() bool { return !done() && k.Now() < limit })
	if !done() {
		t.Fatalf("not done after %v of simulated time", k.Now())
	}
}

// NoGuestErrors fails t for every system with a guest error.
func NoGuestErrors(t testing.TB, names []string, systems ...*memory.System) {
	t.Helper()
	for i, s := range systems {
		if n := s.Guest.Count(); n != 0 {
			t.Errorf("%s: %d guest errors, first: %v", names[i], n, s.Guest.Records()[0])
		}
	}
}
