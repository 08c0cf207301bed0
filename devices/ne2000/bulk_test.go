package ne2000_test

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/devices/ne2000"
)

// wordByWord moves p through the data port a word access at a time: the
// reference the string transfers (ReadBlock/WriteBlock) must match.
type wordByWord struct{ *ne2000.NE2000 }

func (w wordByWord) ReadBlock(off uint64, width int, p []byte) {
	for i := 0; i+width <= len(p); i += width {
		v := w.Read(off, width)
		for j := range width {
			p[i+j] = byte(v >> (8 * j))
		}
	}
}

func (w wordByWord) WriteBlock(off uint64, width int, p []byte) {
	for i := 0; i+width <= len(p); i += width {
		var v uint64
		for j := range width {
			v |= uint64(p[i+j]) << (8 * j)
		}
		w.Write(off, width, v)
	}
}

// String transfers give the same bytes, registers, interrupts and guest
// errors as word-by-word transfers, across the ring's wrap, past the byte
// count and from outside packet RAM.
func TestStringTransfersMatchWordByWord(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		bulk, ref := newRig(t), newRig(t)
		pstop := byte(0x50 + rng.IntN(0x31)) // the ring's end, where remote DMA wraps
		for _, r := range []*rig{bulk, ref} {
			r.init(0x04)
			r.out(0x02, pstop)
		}
		addr := uint16(0x3F00 + rng.IntN(0x4200))
		count := rng.IntN(3000)
		moved := rng.IntN(3200) &^ 1
		payload := make([]byte, moved)
		for i := range payload {
			payload[i] = byte(rng.Uint32())
		}
		write := rng.IntN(2) == 0
		type state struct {
			Got          []byte
			ISR, CR      byte
			CRDA0, CRDA1 byte
			Guest        int
			Stats        ne2000.Stats
		}
		var states [2]state
		for i, r := range []*rig{bulk, ref} {
			var dev interface {
				ReadBlock(uint64, int, []byte)
				WriteBlock(uint64, int, []byte)
			} = r.n
			if i == 1 {
				dev = wordByWord{r.n}
			}
			r.out(cr, crStart)
			r.out(rbcr0, byte(count))
			r.out(rbcr1, byte(count>>8))
			r.out(rsar0, byte(addr))
			r.out(rsar1, byte(addr>>8))
			got := make([]byte, moved)
			if write {
				r.out(cr, crWrite)
				dev.WriteBlock(data, 2, payload)
				// Read the memory back the slow way for comparison.
				r.out(cr, crStart)
				r.out(rbcr0, byte(moved))
				r.out(rbcr1, byte(moved>>8))
				r.out(rsar0, byte(addr))
				r.out(rsar1, byte(addr>>8))
				r.out(cr, crRead)
				wordByWord{r.n}.ReadBlock(data, 2, got)
			} else {
				r.out(cr, crRead)
				dev.ReadBlock(data, 2, got)
			}
			states[i] = state{Got: got, ISR: r.in(isr), CR: r.in(cr), CRDA0: r.in(0x08), CRDA1: r.in(0x09), Guest: r.log.Count(), Stats: r.n.Stats()}
		}
		if diff := cmp.Diff(states[1], states[0]); diff != "" {
			t.Fatalf("round %d (addr %#x count %d moved %d write %v): string transfer differs from word by word (-want +got):\n%s", round, addr, count, moved, write, diff)
		}
	}
}
