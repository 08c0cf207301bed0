package ne2000_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/devices/ne2000"
	"simkron/ethersim"
)

var broadcastMAC = ethersim.MAC{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

func TestPROM(t *testing.T) {
	r := newRig(t)
	r.boardReset()
	got := r.readPROM()
	want := make([]byte, 32)
	for i, b := range ownMAC {
		want[2*i], want[2*i+1] = b, b
	}
	for i := 28; i < 32; i++ {
		want[i] = ne2000.PromSignature
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PROM (-want +got):\n%s", d)
	}
	r.waitRDC()
	r.noGuestErrors()
}

func TestPROMWordMode(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	got := r.blockIn(0, 32)
	if got[0] != ownMAC[0] || got[1] != ownMAC[0] || got[10] != ownMAC[5] || got[30] != 0x57 {
		t.Errorf("word-mode PROM read = % x", got)
	}
	r.noGuestErrors()
}

func TestReset(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	if v := r.in(isr); v&ne2000.IsrRST != 0 {
		t.Fatalf("ISR = %#x after start, want RST clear", v)
	}
	r.n.Receive(frame(ownMAC, 100, 1))
	if !r.irq.level {
		t.Fatal("no interrupt for a received frame")
	}
	r.in(reset)
	type state struct{ CR, ISR, IMR byte }
	got := state{r.in(cr), r.in(isr), 0}
	r.out(cr, 0xA1) // page 2, stopped
	got.IMR = r.in(ne2000.P2IMR)
	want := state{CR: crStop, ISR: ne2000.IsrRST, IMR: 0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after reset (-want +got):\n%s", d)
	}
	if r.irq.level {
		t.Error("interrupt line still asserted after reset")
	}
	// Writing RST does not clear it while stopped; starting does.
	r.out(cr, crStop)
	r.out(isr, 0xFF)
	if r.in(isr)&ne2000.IsrRST == 0 {
		t.Error("RST cleared by a write while stopped")
	}
	r.out(cr, crStart)
	if r.in(isr)&ne2000.IsrRST != 0 {
		t.Error("RST still set after STA")
	}
	if s := r.n.Stats(); s.Resets != 2 {
		t.Errorf("Resets = %d, want 2", s.Resets)
	}
	r.noGuestErrors()
}

func TestTransmit(t *testing.T) {
	tests := []struct {
		name    string
		len     int
		tcr     byte
		status  ethersim.TxStatus
		wantLen int // on the wire, FCS included
		wantISR byte
		wantTSR byte
	}{
		{"runt padded", 42, 0, ethersim.TxStatus{OK: true}, 64, ne2000.IsrPTX, ne2000.TsrPTX},
		{"minimum", 60, 0, ethersim.TxStatus{OK: true}, 64, ne2000.IsrPTX, ne2000.TsrPTX},
		{"odd length", 61, 0, ethersim.TxStatus{OK: true}, 65, ne2000.IsrPTX, ne2000.TsrPTX},
		{"maximum", 1514, 0, ethersim.TxStatus{OK: true}, 1518, ne2000.IsrPTX, ne2000.TsrPTX},
		{"collided", 100, 0, ethersim.TxStatus{OK: true, Collisions: 3}, 104, ne2000.IsrPTX, ne2000.TsrPTX | ne2000.TsrCOL},
		{"aborted", 100, 0, ethersim.TxStatus{Aborted: true, Collisions: 16}, 104, ne2000.IsrTXE, ne2000.TsrABT | ne2000.TsrCOL},
		{"CRC inhibited", 64, ne2000.TcrCRC, ethersim.TxStatus{OK: true}, 64, ne2000.IsrPTX, ne2000.TsrPTX},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.init(0x04)
			r.out(tcr, tt.tcr)
			f := frame(broadcastMAC, tt.len, 3)[:tt.len]
			r.xmit(f)
			if len(r.wire.frames) != 1 {
				t.Fatalf("wire got %d frames, want 1", len(r.wire.frames))
			}
			got := r.wire.frames[0]
			if len(got) != tt.wantLen {
				t.Errorf("wire frame is %d bytes, want %d", len(got), tt.wantLen)
			}
			if !bytes.Equal(got[:tt.len], f) {
				t.Errorf("wire frame does not start with the loaded bytes")
			}
			if tt.tcr&ne2000.TcrCRC == 0 {
				if !fcsOK(got) {
					t.Errorf("bad FCS on the wire")
				}
				if pad := got[tt.len : len(got)-4]; bytes.ContainsFunc(pad, func(r rune) bool { return r != 0 }) {
					t.Errorf("padding not zero: % x", pad)
				}
			}
			if r.in(cr)&ne2000.CrTXP == 0 {
				t.Error("TXP clear while the frame is on the wire")
			}
			if r.irq.level {
				t.Error("interrupt before the transmission ended")
			}
			r.n.TxDone(tt.status)
			if !r.irq.level {
				t.Error("no interrupt after TxDone")
			}
			if got, want := r.in(isr)&^ne2000.IsrRDC, tt.wantISR; got != want {
				t.Errorf("ISR = %#x, want %#x", got, want)
			}
			if got := r.in(tsr); got != tt.wantTSR {
				t.Errorf("TSR = %#x, want %#x", got, tt.wantTSR)
			}
			if r.in(cr)&ne2000.CrTXP != 0 {
				t.Error("TXP still set after TxDone")
			}
			r.out(isr, 0xFF)
			if r.irq.level {
				t.Error("interrupt still asserted after ISR was cleared")
			}
			r.noGuestErrors()
		})
	}
}

func TestTransmitRefusedAndLoopback(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	r.wire.err = errRefused
	r.xmit(frame(broadcastMAC, 100, 1))
	if got := r.in(isr) & ne2000.IsrTXE; got == 0 {
		t.Error("refused transmit did not set ISR.TXE")
	}
	if r.log.Count() != 1 {
		t.Errorf("guest errors = %d, want 1", r.log.Count())
	}
	r.wire.err = nil
	r.out(isr, 0xFF)
	r.out(tcr, 0x02) // internal loopback
	r.xmit(frame(broadcastMAC, 100, 1))
	if len(r.wire.frames) != 0 {
		t.Error("loopback frame reached the wire")
	}
	if r.in(isr)&ne2000.IsrPTX == 0 || r.in(cr)&ne2000.CrTXP != 0 {
		t.Error("loopback transmit did not complete")
	}
}

func TestReceive(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	sizes := []int{46, 47, 100, 252, 253, 1000, 1500}
	var want [][]byte
	for i, n := range sizes {
		f := frame(ownMAC, n, byte(i))
		want = append(want, f)
		r.n.Receive(f)
	}
	if v := r.in(isr); v&ne2000.IsrPRX == 0 {
		t.Fatalf("ISR = %#x, want PRX", v)
	}
	if !r.irq.level {
		t.Fatal("interrupt line not asserted")
	}
	got, hdrs := r.receiveAll()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("frames (-want +got):\n%s", d)
	}
	// Headers: status PRX, count = 4 + frame, next = this + 1 + count/256.
	page := byte(rxStart)
	for i, h := range hdrs {
		count := uint16(4 + len(want[i]))
		wh := header{Status: ne2000.RsrPRX, Next: page + 1 + byte(count>>8), Count: count, This: page}
		if d := cmp.Diff(wh, h); d != "" {
			t.Errorf("header %d (-want +got):\n%s", i, d)
		}
		page = wh.Next
	}
	r.out(cr, crPage1)
	if c := r.in(curr); c != page {
		t.Errorf("CURR = %#x, want %#x", c, page)
	}
	r.out(cr, crStart)
	if r.irq.level {
		t.Error("interrupt still asserted after the receive loop acked it")
	}
	s := r.n.Stats()
	if s.RxFrames != uint64(len(sizes)) {
		t.Errorf("RxFrames = %d, want %d", s.RxFrames, len(sizes))
	}
	r.noGuestErrors()
}

func TestRingWrap(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	wrapped := 0
	for i := range 60 {
		f := frame(ownMAC, 700+i, byte(i)) // 3 pages each
		r.n.Receive(f)
		got, hdrs := r.receiveAll()
		if len(got) != 1 || !bytes.Equal(got[0], f) {
			t.Fatalf("frame %d: read back %d frames, first differs", i, len(got))
		}
		if h := hdrs[0]; h.Next < h.This && h.Next != rxStart {
			wrapped++
		}
	}
	if wrapped == 0 {
		t.Error("no frame spanned the ring's end")
	}
	_, _, cur, bn, _ := r.n.RingState()
	if cur < rxStart || cur >= rxStop || bn < rxStart-1 || bn >= rxStop {
		t.Errorf("CURR %#x BNRY %#x out of the ring", cur, bn)
	}
	r.noGuestErrors()
}

// TestOverflow fills the ring without reading it, checks the overflow
// signals and that the receiver stays wedged, then runs lib8390.c's
// ei_rx_overrun and checks that nothing stored before the overflow was
// lost and that reception resumes.
func TestOverflow(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	var stored [][]byte
	for i := 0; ; i++ {
		f := frame(ownMAC, 1000, byte(i)) // 4 pages each
		r.n.Receive(f)
		if r.in(isr)&ne2000.IsrOVW != 0 {
			break
		}
		stored = append(stored, f)
		if i > 100 {
			t.Fatal("no overflow")
		}
	}
	if got, want := len(stored), (rxStop-rxStart-1)/4; got != want {
		t.Errorf("stored %d frames before the overflow, want %d", got, want)
	}
	if v := r.in(isr); v&ne2000.IsrRST == 0 {
		t.Errorf("ISR = %#x after overflow, want RST", v)
	}
	// Still wedged: more frames are missed.
	r.n.Receive(frame(ownMAC, 60, 99))
	r.n.Receive(frame(ownMAC, 60, 98))
	if got := r.in(cntr2); got != 3 {
		t.Errorf("CNTR2 = %d, want 3", got)
	}
	if got := r.in(cntr2); got != 0 {
		t.Errorf("CNTR2 = %d after a read, want 0", got)
	}

	// ei_rx_overrun.
	wasTXP := r.in(cr)&ne2000.CrTXP != 0
	r.out(cr, crStop)
	r.k.RunUntil(r.k.Now() + 10*1000*1000*1000) // 10 ms, as Linux waits
	r.out(rbcr0, 0)
	r.out(rbcr1, 0)
	r.out(tcr, 0x02)
	r.out(cr, crStart)
	r.n.Receive(frame(ownMAC, 60, 97)) // in loopback: not taken from the wire
	got, _ := r.receiveAll()
	r.out(isr, ne2000.IsrOVW)
	r.out(tcr, 0x00)
	if wasTXP {
		t.Error("TXP was set")
	}
	if d := cmp.Diff(stored, got); d != "" {
		t.Errorf("frames drained after the overflow (-want +got):\n%s", d)
	}
	if v := r.in(isr); v&(ne2000.IsrRST|ne2000.IsrOVW) != 0 {
		t.Errorf("ISR = %#x after recovery", v)
	}
	// Reception resumes.
	f := frame(ownMAC, 200, 7)
	r.n.Receive(f)
	got, _ = r.receiveAll()
	if d := cmp.Diff([][]byte{f}, got); d != "" {
		t.Errorf("frame after recovery (-want +got):\n%s", d)
	}
	s := r.n.Stats()
	if s.Overflows != 1 || s.Missed != 3 || s.RxOffline != 1 {
		t.Errorf("Overflows %d Missed %d RxOffline %d, want 1 3 1", s.Overflows, s.Missed, s.RxOffline)
	}
	r.noGuestErrors()
}

// TestOverflowWithoutStop checks that draining the ring without the
// stop/start of the recovery sequence leaves the receiver wedged.
func TestOverflowWithoutStop(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	for i := range 20 {
		r.n.Receive(frame(ownMAC, 1000, byte(i)))
	}
	r.receiveAll()
	r.out(isr, 0xFF)
	r.n.Receive(frame(ownMAC, 100, 1))
	if got, _ := r.receiveAll(); len(got) != 0 {
		t.Errorf("received %d frames while wedged", len(got))
	}
}

func TestAddressFilter(t *testing.T) {
	mcHit := ethersim.MAC{0x01, 0x00, 0x5E, 0x00, 0x00, 0x01}
	mcMiss := ethersim.MAC{0x01, 0x00, 0x5E, 0x7F, 0x12, 0x34}
	if ne2000.HashIndex(mcHit[:]) == ne2000.HashIndex(mcMiss[:]) {
		t.Fatal("test addresses share a hash bit")
	}
	other := ethersim.MAC{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	tests := []struct {
		name    string
		rcr     byte
		mar     [8]byte
		dst     ethersim.MAC
		want    bool
		wantRSR byte
	}{
		{"own unicast", 0x04, [8]byte{}, ownMAC, true, ne2000.RsrPRX},
		{"other unicast", 0x04, [8]byte{}, other, false, 0},
		{"broadcast with AB", 0x04, [8]byte{}, broadcastMAC, true, ne2000.RsrPRX | ne2000.RsrPHY},
		{"broadcast without AB", 0x00, [8]byte{}, broadcastMAC, false, 0},
		{"multicast hit", 0x0C, marFor(mcHit), mcHit, true, ne2000.RsrPRX | ne2000.RsrPHY},
		{"multicast miss", 0x0C, marFor(mcHit), mcMiss, false, 0},
		{"multicast without AM", 0x04, marFor(mcHit), mcHit, false, 0},
		{"promiscuous other", 0x1C, [8]byte{}, other, true, ne2000.RsrPRX},
		{"promiscuous own", 0x1C, [8]byte{}, ownMAC, true, ne2000.RsrPRX},
		{"PRO alone takes no multicast", 0x10, [8]byte{}, mcHit, false, 0},
		{"promiscuous all multicast", 0x1C, [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, mcMiss, true, ne2000.RsrPRX | ne2000.RsrPHY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.init(tt.rcr)
			r.setMAR(tt.mar)
			f := frame(tt.dst, 80, 5)
			r.n.Receive(f)
			got, hdrs := r.receiveAll()
			if (len(got) == 1) != tt.want {
				t.Fatalf("received %d frames, want accepted=%v", len(got), tt.want)
			}
			if tt.want && hdrs[0].Status != tt.wantRSR {
				t.Errorf("RSR = %#x, want %#x", hdrs[0].Status, tt.wantRSR)
			}
			r.noGuestErrors()
		})
	}
}

func TestHashMatchesLinux(t *testing.T) {
	for i := range 256 {
		a := []byte{0x01, 0x00, 0x5E, byte(i), byte(i * 3), byte(i * 11)}
		if got, want := ne2000.HashIndex(a), etherCRC(a)>>26; got != want {
			t.Fatalf("HashIndex(% x) = %d, Linux ether_crc gives %d", a, got, want)
		}
	}
}

func TestBadFCS(t *testing.T) {
	tests := []struct {
		name      string
		rcr       byte
		dst       ethersim.MAC
		wantFrame bool
		wantCNTR1 byte
	}{
		{"dropped", 0x04, ownMAC, false, 1},
		{"kept with SEP", 0x05, ownMAC, true, 1},
		{"not for us: not counted", 0x04, ethersim.MAC{0x02, 9, 9, 9, 9, 9}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.init(tt.rcr)
			f := frame(tt.dst, 100, 1)
			f[20] ^= 0x10
			r.n.Receive(f)
			isrV := r.in(isr)
			var got []byte
			if tt.wantFrame {
				// Linux's loop rejects errored frames by status only after
				// reading; read the ring directly.
				got = r.blockIn(rxStart<<8, 4)
			}
			if c := r.in(cntr1); c != tt.wantCNTR1 {
				t.Errorf("CNTR1 = %d, want %d", c, tt.wantCNTR1)
			}
			if tt.wantCNTR1 > 0 && isrV&ne2000.IsrRXE == 0 {
				t.Errorf("ISR = %#x, want RXE", isrV)
			}
			if isrV&ne2000.IsrPRX != 0 {
				t.Errorf("ISR = %#x: PRX for a bad frame", isrV)
			}
			_, _, cur, _, _ := r.n.RingState()
			if stored := cur != rxStart; stored != tt.wantFrame {
				t.Errorf("stored = %v, want %v", stored, tt.wantFrame)
			}
			if tt.wantFrame && got[0] != ne2000.RsrCRC {
				t.Errorf("stored status %#x, want CRC", got[0])
			}
			if s := r.n.Stats(); s.CRCErrors != uint64(tt.wantCNTR1) {
				t.Errorf("Stats.CRCErrors = %d", s.CRCErrors)
			}
		})
	}
}

func TestCounterOverflow(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	r.out(isr, 0xFF)
	f := frame(ownMAC, 100, 1)
	f[30] ^= 1
	for range 127 {
		r.n.Receive(f)
	}
	if r.in(isr)&ne2000.IsrCNT != 0 {
		t.Fatal("CNT set before a counter's MSB")
	}
	r.n.Receive(f)
	if r.in(isr)&ne2000.IsrCNT == 0 {
		t.Fatal("CNT not set at 128")
	}
	for range 100 {
		r.n.Receive(f)
	}
	if c := r.in(cntr1); c != 192 {
		t.Errorf("CNTR1 = %d, want to saturate at 192", c)
	}
	if c := r.in(cntr0); c != 0 {
		t.Errorf("CNTR0 = %d", c)
	}
}

func TestInterruptMask(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	r.out(imr, 0)
	r.n.Receive(frame(ownMAC, 100, 1))
	if r.irq.level {
		t.Fatal("interrupt with IMR = 0")
	}
	r.out(imr, ne2000.IsrPRX)
	if !r.irq.level {
		t.Fatal("no interrupt after unmasking PRX")
	}
	r.out(isr, ne2000.IsrPRX)
	if r.irq.level {
		t.Fatal("interrupt after acking PRX")
	}
	if got, want := r.n.Stats().Interrupts, uint64(r.irq.rises); got != want {
		t.Errorf("Stats.Interrupts = %d, line rose %d times", got, want)
	}
}

func TestBlockMatchesSingle(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	payload := make([]byte, 256)
	for i := range payload {
		payload[i] = byte(i * 13)
	}
	before := r.n.Stats().RemoteDMA
	r.blockOut(0x4000, payload)
	block := r.blockIn(0x4000, 256)
	r.out(rbcr0, 0)
	r.out(rbcr1, 1)
	r.out(rsar0, 0)
	r.out(rsar1, 0x40)
	r.out(cr, crRead)
	single := make([]byte, 0, 256)
	for range 128 {
		v := r.n.Read(data, 2)
		single = append(single, byte(v), byte(v>>8))
	}
	if d := cmp.Diff(payload, block); d != "" {
		t.Errorf("block read (-want +got):\n%s", d)
	}
	if d := cmp.Diff(payload, single); d != "" {
		t.Errorf("single reads (-want +got):\n%s", d)
	}
	if got := r.n.Stats().RemoteDMA - before; got != 3*256 {
		t.Errorf("RemoteDMA grew by %d, want %d", got, 3*256)
	}
	r.noGuestErrors()
}

func TestMisprogramming(t *testing.T) {
	tests := []struct {
		name string
		do   func(r *rig)
		want string // in the first guest error
	}{
		{"remote DMA past the buffer", func(r *rig) {
			r.out(cr, crStop)
			r.out(pstop, 0x60) // no ring wrap at the end of RAM
			r.out(cr, crStart)
			r.blockIn(0x7FC0, 128)
		}, "outside the PROM and packet RAM"},
		{"remote write to the PROM", func(r *rig) { r.blockOut(0, make([]byte, 8)) }, "outside the packet RAM"},
		{"transmit with TBCR 0", func(r *rig) {
			r.out(tbcr0, 0)
			r.out(tbcr1, 0)
			r.out(cr, crTransmit)
			if r.in(isr)&ne2000.IsrTXE == 0 {
				r.t.Error("no TXE")
			}
		}, "TBCR = 0"},
		{"TXP while stopped", func(r *rig) {
			r.out(cr, crStop)
			r.out(tbcr0, 60)
			r.out(cr, 0x25)
		}, "stopped"},
		{"TXP while transmitting", func(r *rig) {
			r.xmit(frame(broadcastMAC, 60, 1))
			r.out(cr, crTransmit)
		}, "in progress"},
		{"data port without remote DMA", func(r *rig) {
			r.out(cr, crStart)
			r.in(data)
			r.n.WriteBlock(data, 2, make([]byte, 64))
		}, "without a remote DMA"},
		{"data port beyond the count", func(r *rig) {
			r.blockIn(0x4000, 4)
			r.in(data)
		}, "beyond the remote byte count"},
		{"reading the ring while stopped", func(r *rig) {
			r.out(cr, crStop)
			r.out(rbcr0, 4)
			r.out(cr, 0x09)
			r.n.Read(data, 2)
		}, "stopped"},
		{"PSTART >= PSTOP", func(r *rig) {
			r.out(pstart, 0x70)
			r.out(pstop, 0x50)
			r.n.Receive(frame(ownMAC, 100, 1))
			r.n.Receive(frame(ownMAC, 100, 1))
		}, "PSTART >= PSTOP"},
		{"CURR outside the ring", func(r *rig) {
			r.out(cr, crPage1)
			r.out(curr, 0x20)
			r.out(cr, crStart)
			r.n.Receive(frame(ownMAC, 100, 1))
		}, "CURR is outside"},
		{"frame larger than the ring", func(r *rig) {
			r.out(cr, crStop)
			r.out(pstart, 0x7C)
			r.out(bnry, 0x7F)
			r.out(cr, crPage1Stop)
			r.out(curr, 0x7C)
			r.out(cr, crStart)
			r.n.Receive(frame(ownMAC, 1500, 1))
		}, "receive ring has only 4"},
		{"page 3", func(r *rig) {
			r.out(cr, 0xE2)
			r.in(5)
			r.out(5, 1)
		}, "page 3"},
		{"outside the window", func(r *rig) { r.n.Read(0x40, 1) }, "outside"},
		{"DMA command 000", func(r *rig) { r.out(cr, 0x02) }, "not allowed"},
		{"LAS", func(r *rig) { r.out(dcr, 0x4D) }, "LAS"},
		{"transmit past the RAM", func(r *rig) {
			r.out(tbcr0, 0)
			r.out(tbcr1, 2)
			r.out(tpsr, 0x7F)
			r.out(cr, crTransmit)
		}, "not inside the packet RAM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			r.init(0x04)
			tt.do(r)
			recs := r.log.Records()
			if len(recs) == 0 {
				t.Fatalf("no guest error, want one containing %q", tt.want)
			}
			if !strings.Contains(recs[0].Msg, tt.want) {
				t.Errorf("first guest error %q, want one containing %q", recs[0].Msg, tt.want)
			}
			if recs[0].Component != "host.nic0" {
				t.Errorf("component %q", recs[0].Component)
			}
			if got := r.n.Stats().GuestErrors; got != uint64(r.log.Count()) {
				t.Errorf("Stats.GuestErrors = %d, log has %d", got, r.log.Count())
			}
		})
	}
}

// TestResetDuringTransmit abandons a frame on the wire with a board reset
// and starts another: it must wait for the wire and complete normally.
func TestResetDuringTransmit(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	r.xmit(frame(broadcastMAC, 100, 1))
	r.init(0x04)
	r.xmit(frame(broadcastMAC, 200, 2))
	if len(r.wire.frames) != 1 {
		t.Fatalf("wire has %d frames while busy, want 1", len(r.wire.frames))
	}
	r.n.TxDone(ethersim.TxStatus{OK: true}) // the abandoned frame
	if r.in(isr)&ne2000.IsrPTX != 0 {
		t.Error("PTX for the abandoned frame")
	}
	if len(r.wire.frames) != 2 || len(r.wire.frames[1]) != 14+200+4+4 {
		t.Fatalf("queued frame not sent")
	}
	r.n.TxDone(ethersim.TxStatus{OK: true})
	if r.in(isr)&ne2000.IsrPTX == 0 {
		t.Error("no PTX for the second frame")
	}
	r.n.TxDone(ethersim.TxStatus{OK: true})
	if s := r.n.Stats(); s.SpuriousTxEnd != 1 || s.TxFrames != 2 {
		t.Errorf("SpuriousTxEnd %d TxFrames %d, want 1 2", s.SpuriousTxEnd, s.TxFrames)
	}
	r.noGuestErrors()
}

func TestSendPacket(t *testing.T) {
	r := newRig(t)
	r.init(0x04)
	f := frame(ownMAC, 100, 4)
	r.n.Receive(f)
	r.out(bnry, rxStart) // datasheet convention: BNRY = first unread page
	r.out(cr, 0x1A)      // start, send packet
	got := make([]byte, 4+len(f))
	r.n.ReadBlock(data, 2, got)
	r.waitRDC()
	if !bytes.Equal(got[4:], f) {
		t.Error("send packet read the wrong bytes")
	}
	if b := r.in(bnry); b != got[1] {
		t.Errorf("BNRY = %#x, want next %#x", b, got[1])
	}
	r.noGuestErrors()
}

func TestParams(t *testing.T) {
	var m ethersim.MAC
	if err := m.UnmarshalText([]byte("02:00:5e:10:20:30")); err != nil || m != ownMAC {
		t.Errorf("UnmarshalText = %v, %v", m, err)
	}
	for _, bad := range []string{"", "02:00", "02:00:00:00:00:0g", "02:00:00:00:00:001"} {
		if err := m.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", bad)
		}
	}
	if b, _ := ne2000.DefaultParams().MAC.MarshalText(); string(b) != "02:00:00:00:00:01" {
		t.Errorf("default MAC %s", b)
	}
	if err := (ne2000.Params{MAC: broadcastMAC}).Validate(); err == nil {
		t.Error("group address accepted")
	}
	if err := ne2000.DefaultParams().Validate(); err != nil {
		t.Error(err)
	}
}

func TestNilIRQLine(t *testing.T) {
	r := newRig(t)
	n := ne2000.New(r.k, "x", ne2000.DefaultParams(), nil, nil)
	n.Write(ne2000.P0IMR, 1, 0xFF)
	n.Read(reset, 1)
	n.Read(data, 2) // guest error, no log: counted only
	if n.Stats().GuestErrors != 1 {
		t.Errorf("GuestErrors = %d", n.Stats().GuestErrors)
	}
}
