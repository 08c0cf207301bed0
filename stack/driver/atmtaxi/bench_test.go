package atmtaxi_test

import (
	"testing"

	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
)

// BenchmarkCellsThroughSwitch runs a 256 KiB TCP transfer between two
// DECstations through the ATM switch (PIO out, the board's sorter in) and
// reports simulated cells per host second: every cell crosses a sending
// interface, two links, the switch and a receiving interface, with the
// hosts' software running on their simulated CPUs.
func BenchmarkCellsThroughSwitch(b *testing.B) {
	dp := ipDriver(atm.PIO, atm.Sort)
	dp.CRCAssist = true
	var cells uint64
	for range b.N {
		r := ipRigP(b, "ds5000-200", dp, ipParams(atm.DefaultMTU), true)
		done := false
		runTCP(b, r, 256<<10, &done)
		r.k.RunWhile(func() bool { return !done && r.k.Now() < 60*sim.Second })
		if !done {
			b.Fatal("transfer not done")
		}
		cells += r.sw.Stats().Cells
		r.a.c.Shutdown()
		r.b.c.Shutdown()
	}
	b.ReportMetric(float64(cells)/b.Elapsed().Seconds(), "cells/s")
}
