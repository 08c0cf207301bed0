package ethersim_test

import (
	"fmt"

	"simkron/ethersim"
	"simkron/sim"
)

// printer is a Station that prints when a frame arrives.
type printer struct {
	name string
	k    *sim.Scheduler
}

func (p printer) Receive(frame []byte) {
	fmt.Printf("%v %s received %d bytes, FCS ok: %v\n", p.k.Now(), p.name, len(frame), ethersim.CheckFCS(frame))
}

// A 64-byte frame on a 10 Mbit/s coax segment: 72 bytes with the preamble
// at 0.8 us each, then 1 us of propagation.
func Example() {
	k := sim.NewScheduler(1)
	net := ethersim.NewNetwork(k)
	lan, _ := net.NewSegment("lan", ethersim.DefaultSegmentParams())
	a, _ := lan.Attach("hostA.nic0", printer{"hostA", k}, ethersim.FaultParams{})
	_, _ = lan.Attach("hostB.nic0", printer{"hostB", k}, ethersim.FaultParams{})
	a.OnTxDone = func(st ethersim.TxStatus) { fmt.Printf("%v hostA sent: %+v\n", k.Now(), st) }

	dst, _ := ethersim.ParseMAC("02:00:00:00:00:02")
	src, _ := ethersim.ParseMAC("02:00:00:00:00:01")
	f := append(append(dst[:], src[:]...), 0x88, 0xb5)
	f = ethersim.AppendFCS(append(f, make([]byte, 46)...))
	_ = a.Transmit(f)
	k.Run()
	// Output:
	// 57.6us hostA sent: {OK:true Collisions:0 Aborted:false Deferred:false}
	// 58.6us hostB received 64 bytes, FCS ok: true
}
