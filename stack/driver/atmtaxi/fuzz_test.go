package atmtaxi_test

import (
	"bytes"
	"testing"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/kernel"
)

// FuzzReassembly drives the driver's AAL5 reassembly with the cells of
// known PDUs on two VCs, lost, duplicated and interleaved as the input
// says, plus cells on a VC nobody opened. Nothing may panic or be a guest
// error, and every PDU a socket delivers must be one that was sent on its
// VC, whole; with no cell lost (on the link or by a FIFO overrun) every
// PDU sent whole is delivered.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1})
	f.Add([]byte{0, 0, 4, 0, 1, 1, 9, 1, 3, 0, 7, 0, 0, 0})
	f.Add([]byte{2, 2, 2, 6, 6, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1})
	clean := make([]byte, 44)
	for i := range clean {
		clean[i] = byte(i % 2 * 4) // every cell of both VCs, alternating
	}
	f.Add(clean)
	m := loadMachine(f, "ds5000-200")
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 600 {
			return
		}
		k := sim.NewScheduler(1)
		dp := m.Driver
		dp.RxInterrupt = atm.IntCell
		h := newHost(t, k, m, "r", &dp, nil)
		l, _ := atmnet.New(k).NewLink("r", atmnet.DefaultLinkParams())
		h.dev.SetLine(l.A())
		// Each VC's stream: PDUs of 1, 3 and 7 cells, repeated.
		var pdus [2][][]byte
		var streams [2][]atmnet.Cell
		for v := range 2 {
			vc := atmnet.VC{VCI: uint16(100 + v)}
			for i, n := range []int{1, 3, 7, 1, 3, 7} {
				sdu := patterned(1000*v+100*i, n*48-8)
				pdus[v] = append(pdus[v], sdu)
				streams[v] = append(streams[v], pduCellsOf(vc, aal5Of(sdu, nil))...)
			}
		}
		var cells []atmnet.Cell
		var next [2]int
		faulty := false
		for _, op := range ops {
			faulty = faulty || op&3 == 1 || op&3 == 2
			v := int(op >> 2 & 1)
			s := streams[v]
			switch op & 3 {
			case 0: // the VC's next cell
				if next[v] < len(s) {
					cells = append(cells, s[next[v]])
					next[v]++
				}
			case 1: // lost
				next[v]++
			case 2: // duplicated
				if next[v] < len(s) {
					cells = append(cells, s[next[v]], s[next[v]])
					next[v]++
				}
			case 3: // a stray cell on an unopened VC
				var c atmnet.Cell
				c.SetWord(atmnet.VC{VCI: 300}.Word(op >> 3 & 1))
				cells = append(cells, c)
			}
		}
		delivered := 0
		for v := range 2 {
			h.kern.Spawn("recv", func(th *kernel.Thread) {
				sock, err := h.drv.OpenRaw(th, atm.VC{VCI: uint16(100 + v)}, true)
				if err != nil {
					t.Error(err)
					return
				}
				buf := h.kern.Kmalloc(8 * 48)
				for {
					n, _ := sock.Recv(th, buf, 8*48)
					p := make([]byte, n)
					h.sys.Phys.Read(buf, p)
					ok := false
					for _, want := range pdus[v] {
						ok = ok || bytes.Equal(p, want)
					}
					if !ok {
						t.Errorf("VC %d delivered a PDU of %d bytes that was never sent", 100+v, n)
					}
					delivered++
				}
			})
		}
		feed(k, l.B(), sim.Millisecond, cells)
		k.RunUntil(100 * sim.Millisecond)
		if delivered > len(cells) {
			t.Errorf("%d PDUs from %d cells", delivered, len(cells))
		}
		// Cells at line rate can overrun the receive FIFO (a burst of
		// stray cells the PIO path must still read and drop): a loss the
		// card and the driver count, not a fault of reassembly.
		overrun := h.dev.Stats().RxOverflow > 0
		if overrun && h.drv.Stats().Overruns == 0 {
			t.Errorf("the FIFO overflowed %d times and the driver saw no overrun", h.dev.Stats().RxOverflow)
		}
		if !faulty && !overrun { // every PDU whose cells were all sent arrives
			want := 0
			for v := range 2 {
				for _, c := range streams[v][:min(next[v], len(streams[v]))] {
					if c.EndOfPDU() {
						want++
					}
				}
			}
			if delivered != want {
				t.Errorf("no cell lost or duplicated, yet %d PDUs delivered of %d", delivered, want)
			}
		}
		h.noGuestErrors(t)
		h.c.Shutdown()
	})
}
