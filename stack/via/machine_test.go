package via_test

import (
	"testing"

	"simkron/config"
	"simkron/cpu"
	"simkron/devices/simoseth"
	"simkron/devices/timer"
	"simkron/memory"
	"simkron/sim"
	drv "simkron/stack/driver/simoseth"
	"simkron/stack/kernel"
)

// machineFile is what the hand-built hosts take from the study's machine
// file, configs/machines/simos-mipsy.toml, decoded strictly into the
// components' own Params, so that these tests need no machine/ (which
// builds the same hosts from the file: machine/device_simoseth.go).
type machineFile struct {
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

const machinePath = "../../configs/machines/simos-mipsy.toml"

func loadMachine(t testing.TB) machineFile {
	t.Helper()
	f, err := config.Parse(machinePath)
	if err != nil {
		t.Fatal(err)
	}
	m := machineFile{CPU: cpu.DefaultParams(), Kernel: kernel.DefaultParams(), Timer: timer.DefaultParams(),
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
