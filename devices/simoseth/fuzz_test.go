package simoseth_test

import (
	"testing"

	"simkron/devices/simoseth"
	"simkron/sim"
)

// FuzzDescriptors is a misbehaving driver: it writes random descriptor
// contents into the rings (ownership, flags, lengths, buffer addresses in
// and out of memory), random values into the registers (ring bases and
// counts, poll demands, resets, reserved offsets), and the network sends
// frames of random lengths. The card may report guest errors and write
// error bits into descriptors, but it must never panic, its interrupt
// line must always equal ISR & IMR != 0, its ring indexes must stay inside
// their rings, and its DMA engine must come to rest.
func FuzzDescriptors(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0x80, 0x30, 0x00, 0x40, 0, 5, 1, 3, 2, 40})
	f.Add([]byte{0, 1, 2, 0x00, 0x10, 0x05, 0x00, 1, 3, 7, 0, 9, 4, 4, 0})
	f.Add([]byte{1, 0, 0x07, 0, 0, 0, 0, 1, 1, 3, 0, 0, 0, 4, 0x80, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 0, 0x80, 0x00, 0x06, 0x00, 3, 250, 3, 200, 3, 100, 2, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		p := simoseth.DefaultParams()
		p.RxBuffer = 4 * sim.KiB
		p.TxBuffer = 4 * sim.KiB
		r := newRig(t, p)
		r.start(8, 8, 512, allInts)
		regs := []uint64{simoseth.RegCtrl, simoseth.RegISR, simoseth.RegIMR, simoseth.RegTxBase, simoseth.RegTxCount,
			simoseth.RegTxPoll, simoseth.RegRxBase, simoseth.RegRxCount, simoseth.RegRxPoll, simoseth.RegTxIndex,
			simoseth.RegMACLo, simoseth.RegMissed, simoseth.RegState, 0x200, 0x3E}
		next := func() byte {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return b
		}
		word := func() uint32 {
			return uint32(next()) | uint32(next())<<8 | uint32(next())<<16 | uint32(next())<<24
		}
		for step := 0; len(ops) > 0; step++ {
			switch next() % 6 {
			case 0: // a descriptor written by the driver
				ring := uint32(txRing)
				if next()&1 == 1 {
					ring = rxRing
				}
				i := int(next() % 10) // may lie past the ring's end
				st := uint32(next()) << 24
				ctrl := uint32(next())<<24 | uint32(next())<<8 | uint32(next())
				buf := uint32(bufs) + uint32(next())<<8
				if next()&1 == 1 {
					buf = word()
				}
				r.putDesc(ring, i, st, ctrl, buf)
			case 1: // a register write
				off := regs[int(next())%len(regs)]
				v := word()
				if off == simoseth.RegTxBase || off == simoseth.RegRxBase {
					v = []uint32{txRing, rxRing, v, txRing + 8}[v%4]
				}
				if off == simoseth.RegTxCount || off == simoseth.RegRxCount {
					v %= 12
				}
				r.out(off, v)
			case 2:
				r.n.Read(regs[int(next())%len(regs)], 1<<(next()%4))
			case 3: // a frame from the network
				n := 14 + int(next())*6
				dst := ownMAC
				if next()&1 == 1 {
					dst = bcastMAC
				}
				r.n.Receive(withFCS(frame(dst, peerMAC, n, byte(step))))
			case 4:
				r.k.RunEvents(uint64(next()))
			case 5: // a wide or misaligned access
				r.n.Write(uint64(next())&0x3F, 1<<(next()%4), uint64(word()))
			}
			r.check(t, step)
		}
		r.k.RunEvents(1 << 20)
		if r.n.Busy() || r.k.Pending() != 0 {
			t.Fatalf("the card did not come to rest: busy %v, %d events pending", r.n.Busy(), r.k.Pending())
		}
		r.check(t, -1)
	})
}

func (r *rig) check(t *testing.T, step int) {
	isr, _ := r.n.Peek(simoseth.RegISR)
	imr, _ := r.n.Peek(simoseth.RegIMR)
	if want := isr&imr != 0; r.irq.level != want || r.n.IRQLevel() != want {
		t.Fatalf("step %d: line %v, ISR %#x IMR %#x", step, r.irq.level, isr, imr)
	}
	tx, txc, rx, rxc := r.n.Indexes()
	if txc > 0 && tx >= txc || rxc > 0 && rx >= rxc || txc == 0 && tx != 0 || rxc == 0 && rx != 0 {
		t.Fatalf("step %d: index outside its ring: tx %d/%d rx %d/%d", step, tx, txc, rx, rxc)
	}
}
