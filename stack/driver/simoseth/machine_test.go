package simoseth_test

import (
	"testing"

	"simkron/internal/simostest"
	"simkron/sim"
)

type machineFile = simostest.MachineFile

func loadMachine(t testing.TB) machineFile {
	return simostest.Load(t, "../../../configs/machines/simos-mipsy.toml")
}

// TestMachineFile: the study's machine file holds what the brief and the
// reference say, in keys the components decode strictly.
func TestMachineFile(t *testing.T) {
	m := loadMachine(t)
	type want struct {
		L1I, L1D, L2 sim.Size
		L1Hit, L2Hit int64
		Mem          int64
		MemSize      sim.Size
		NIC          uint64
		DMARate      sim.Size
		Timer        uint64
	}
	got := want{m.Cache.L1I.Size, m.Cache.L1D.Size, m.Cache.L2.Size, m.Cache.L1D.HitLatency, m.Cache.L2.HitLatency,
		m.Cache.MemLatency, m.Memory.Size, m.NICAt, m.Card.DMARate, m.TimerAt}
	w := want{32 * sim.KiB, 32 * sim.KiB, sim.MiB, 1, 10, 100, 32 * sim.MiB, 0xA0E02000, 1200 * 1000 * 1000, 0xA0E00000}
	if got != w {
		t.Errorf("machine file: got %+v, want %+v", got, w)
	}
	if m.Cache.L1I.HitLatency != 1 || m.CPU.CPI != 1 {
		t.Errorf("L1I hit %d, CPI %v", m.Cache.L1I.HitLatency, m.CPU.CPI)
	}
}
