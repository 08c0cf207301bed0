package machine_test

import (
	"testing"

	"simkron/ethersim"
	"simkron/internal/machinetest"
	"simkron/machine"
)

// With every frame reaching pcB corrupted (one bit flipped), the card's
// CRC errors are fewer than the wire's corrupted frames by exactly those
// whose flipped bit is in the destination address: the DP8390 looks at
// the address first, refuses those, and tallies CRC errors (CNTR1) only
// for frames that pass address recognition. The UDP sweep's numbers: 119
// corrupted, 16 in the destination address, 103 CRC errors.
func TestCRCErrorsAfterTheAddressFilter(t *testing.T) {
	exp, err := machine.LoadExperiment(machinetest.Config("udp-ne2000.toml"))
	if err != nil {
		t.Fatal(err)
	}
	machinetest.Segments(exp)[0].Pcap = false
	machinetest.NICSpecs(&exp.Hosts[1])[0].Faults = ethersim.FaultParams{Corrupt: 1}
	r := machinetest.Build(t, exp, machine.Options{NoCapture: true})
	inDst, elsewhere := 0, 0
	machinetest.Ethernet(r.Net).Segments()[0].Trace.Connect(func(tr ethersim.TraceRecord) {
		if tr.Kind == ethersim.TraceCorrupt && tr.Attachment == "pcB.nic0" {
			if tr.Arg < 48 { // the first 6 bytes: the destination address
				inDst++
			} else {
				elsewhere++
			}
		}
	})
	if _, err := r.Execute(machine.Options{}); err != nil {
		t.Fatal(err)
	}
	nic := machinetest.NICs(machinetest.Host(t, r, "pcB"))[0]
	wire, card := nic.Port.Stats(), ne2k(nic).Stats()
	t.Logf("wire corrupted %d (%d in the destination address), card: %d CRC errors, %d refused by the filter", wire.Corrupted, inDst, card.CRCErrors, card.RxFiltered)
	if wire.Corrupted != uint64(inDst+elsewhere) || card.CRCErrors != uint64(elsewhere) || card.RxFiltered != uint64(inDst) || inDst == 0 {
		t.Errorf("wire corrupted %d: %d in the destination address, %d elsewhere; card: %d CRC errors, %d refused by the filter; want the CRC errors the ones elsewhere, the refused the others",
			wire.Corrupted, inDst, elsewhere, card.CRCErrors, card.RxFiltered)
	}
}
