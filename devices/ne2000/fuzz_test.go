package ne2000_test

import (
	"testing"

	"simkron/devices/ne2000"
	"simkron/ethersim"
)

// FuzzNE2000 drives an initialised card with random register reads and
// writes, data-port block transfers, board resets, received frames and
// transmit completions. Nothing may panic, and after every step the
// interrupt line must equal (ISR & IMR & 0x7F) != 0.
//
// The first byte picks the mode. In the checked mode the ring registers
// keep valid values (PSTART/PSTOP writes are dropped, CURR/BNRY writes are
// folded into the ring) and CURR and BNRY must stay in [PSTART, PSTOP). In
// the raw mode every write goes through, and the chip itself must never
// move CURR out of a ring that was valid before a frame arrived.
func FuzzNE2000(f *testing.F) {
	f.Add([]byte{0, 2, 0, 10, 2, 1, 200, 1, 0x10, 0, 3, 1, 0})
	f.Add([]byte{1, 0, 0, 0x0A, 0, 0x0A, 4, 4, 0, 8, 2, 2, 250})
	f.Add([]byte{0, 2, 0, 250, 2, 0, 250, 2, 0, 250, 2, 0, 250, 2, 0, 250, 2, 0, 250, 2, 0, 250})
	f.Add([]byte{1, 0, 0, 0x21, 0, 1, 0x50, 0, 2, 0x40, 2, 0, 100})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		r := newRig(t)
		r.init(0x04)
		raw := ops[0]&1 == 1
		ops = ops[1:]
		for i := 0; i+2 < len(ops); i += 3 {
			op, a, b := ops[i], ops[i+1], ops[i+2]
			switch op % 8 {
			case 0: // register write
				off := uint64(a & 0x0F)
				page := r.in(ne2000.RegCR) >> 6
				if !raw {
					ps, pe, _, _, _ := r.n.RingState()
					switch {
					case page == 0 && (off == pstart || off == pstop):
						continue
					case page == 0 && off == bnry, page == 1 && off == curr:
						b = ps + b%(pe-ps)
					}
				}
				r.out(off, b)
			case 1: // read anything in the window, reset port included
				r.n.Read(uint64(a&0x1F), 1<<(b%3))
			case 2: // a frame from the network
				var dst ethersim.MAC
				switch a % 4 {
				case 0:
					dst = ownMAC
				case 1:
					dst = broadcastMAC
				case 2:
					dst = ethersim.MAC{0x01, 0x00, 0x5E, 0, 0, a}
				case 3:
					dst = ethersim.MAC{0x02, 9, 9, 9, 9, a}
				}
				fr := frame(dst, int(b)*6, a)
				if a&0x10 != 0 {
					fr[len(fr)-1] ^= 0xFF
				}
				if a&0x20 != 0 {
					fr = fr[:int(b)%len(fr)]
				}
				ps, pe, cu, bn, _ := r.n.RingState()
				valid := ps >= 0x40 && pe <= 0x80 && ps < pe && cu >= ps && cu < pe && (bn >= ps && bn < pe || bn == ps-1)
				r.n.Receive(fr)
				if _, _, cu2, _, _ := r.n.RingState(); valid && (cu2 < ps || cu2 >= pe) {
					t.Fatalf("CURR moved from %#x to %#x outside the ring [%#x, %#x)", cu, cu2, ps, pe)
				}
			case 3:
				r.n.TxDone(ethersim.TxStatus{OK: a&1 == 0, Aborted: a&1 == 1, Collisions: int(a >> 4)})
			case 4:
				p := make([]byte, int(b)*2)
				r.n.ReadBlock(ne2000.RegDataPort, 1+int(a&1), p)
			case 5:
				p := make([]byte, int(b)*2)
				for j := range p {
					p[j] = a + byte(j)
				}
				r.n.WriteBlock(ne2000.RegDataPort, 1+int(a&1), p)
			case 6: // a wide write, split into byte writes on registers
				off := uint64(a & 0x1F)
				if !raw {
					off |= 0x10 // data and reset ports only
				}
				r.n.Write(off, 1<<(b%3), uint64(a)*0x0101)
			case 7:
				r.n.Read(ne2000.RegReset, 1)
				r.n.Write(ne2000.RegReset, 1, 0)
			}
			isrV, imrV := r.n.ISRIMR()
			if want := isrV&imrV&0x7F != 0; r.irq.level != want || r.n.IRQLevel() != want {
				t.Fatalf("step %d: line %v, ISR %#x IMR %#x", i/3, r.irq.level, isrV, imrV)
			}
			if !raw {
				ps, pe, cu, bn, _ := r.n.RingState()
				if cu < ps || cu >= pe || bn < ps || bn >= pe {
					t.Fatalf("step %d: CURR %#x BNRY %#x outside [%#x, %#x)", i/3, cu, bn, ps, pe)
				}
			}
		}
	})
}
