package ne2000_test

import (
	"fmt"

	"simkron/devices/ne2000"
	"simkron/memory"
	"simkron/sim"
)

// A driver reads the station address from the PROM with a byte-wide
// remote read of 32 bytes at card address 0 (Linux ne.c's probe).
func Example_prom() {
	k := sim.NewScheduler(1)
	n := ne2000.New(k, "hostA.nic0", ne2000.DefaultParams(), nil, &memory.GuestLog{})
	for _, w := range [][2]uint64{
		{ne2000.RegCR, 0x21}, {ne2000.P0DCR, 0x48},
		{ne2000.P0RBCR0, 32}, {ne2000.P0RBCR1, 0}, {ne2000.P0RSAR0, 0}, {ne2000.P0RSAR1, 0},
		{ne2000.RegCR, 0x0A},
	} {
		n.Write(w[0], 1, w[1])
	}
	prom := make([]byte, 32)
	n.ReadBlock(ne2000.RegDataPort, 1, prom)
	fmt.Printf("% x\n", prom[:12])
	fmt.Printf("signature %c%c\n", prom[28], prom[30])
	// Output:
	// 02 02 00 00 00 00 00 00 00 00 01 01
	// signature WW
}
