package simoseth_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"simkron/devices/simoseth"
	"simkron/ethersim"
	"simkron/memory"
	"simkron/sim"
)

const allInts = simoseth.IntTx | simoseth.IntRx | simoseth.IntRxNoBuf | simoseth.IntErr

// TestTransmitGather sends a frame given in two pieces: the card reads
// both, pads the frame to 60 bytes, appends the FCS, hands the
// descriptors back (OWN clear, FIRST/LAST kept) and interrupts once the
// frame is in its buffer, at the time its DMA transfers add up to.
func TestTransmitGather(t *testing.T) {
	r := newRig(t, simoseth.DefaultParams())
	r.start(4, 4, 1536, allInts)
	f := frame(peerMAC, ownMAC, 34, 1)
	hdr, data := uint32(bufs+0x10000), uint32(bufs+0x11003) // any alignment
	r.sys.Phys.Write(memory.Addr(hdr), f[:14])
	r.sys.Phys.Write(memory.Addr(data), f[14:])
	r.putDesc(txRing, 1, simoseth.DescOwn, simoseth.DescLast|simoseth.DescIOC|20, data)
	r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|14, hdr)
	var intAt sim.Time
	r.k.Schedule(sim.NewEvent("poll", func() { r.out(simoseth.RegTxPoll, 1) }), 0)
	for r.k.Step() {
		if r.irq.level && intAt == 0 {
			intAt = r.k.Now()
		}
	}
	want := withFCS(append(append([]byte(nil), f...), make([]byte, 26)...))
	if len(r.w.sent) != 1 || !bytes.Equal(r.w.sent[0], want) {
		t.Fatalf("wire got %d frames, first % x; want % x", len(r.w.sent), r.w.sent, want)
	}
	if got := []uint32{r.status(txRing, 0), r.status(txRing, 1)}; !cmp.Equal(got, []uint32{simoseth.DescFirst, simoseth.DescLast}) {
		t.Errorf("statuses written back %#x, want FIRST, LAST", got)
	}
	if isr := r.in(simoseth.RegISR); isr != simoseth.IntTx {
		t.Errorf("ISR %#x, want IntTx", isr)
	}
	if idx := r.in(simoseth.RegTxIndex); idx != 2 {
		t.Errorf("TXINDEX %d, want 2", idx)
	}
	// Enabling the transmitter fetched descriptor 0 at time 0 and found it
	// the driver's; the poll at time 0 waits for that fetch, then two
	// fetches and the two pieces, then the two status write-backs: 3·16 +
	// 14 + 20 + 2·4 bytes, one transfer each.
	d := r.n.Port().Duration
	if wantAt := 3*d(16) + d(14) + d(20) + 2*d(4); intAt != wantAt {
		t.Errorf("IntTx at %v, want %v", intAt, wantAt)
	}
	if s := r.n.Stats(); s.TxFrames != 1 || s.TxDMAFrames != 1 || s.DescFetches != 4 || s.TxBytes != 64 {
		t.Errorf("stats %+v", s)
	}
	r.out(simoseth.RegISR, simoseth.IntTx)
	if r.irq.level || r.in(simoseth.RegISR) != 0 {
		t.Error("writing 1 to ISR did not clear the cause and the line")
	}
	// The ring is empty again: the transmitter suspended on descriptor 2.
	if st := r.in(simoseth.RegState) & 3; st != simoseth.StateSuspended {
		t.Errorf("transmit state %d, want suspended", st)
	}
	r.noGuestErrors()
}

// TestTransmitWaitsForBufferSpace: with a 2 KiB transmit buffer and a slow
// wire, the DMA reads a frame only when the buffer has room for it; every
// frame still goes out, in order, byte for byte.
func TestTransmitWaitsForBufferSpace(t *testing.T) {
	p := simoseth.DefaultParams()
	p.TxBuffer = 2 * sim.KiB
	r := newRig(t, p)
	r.w.rate = 10 * sim.Mbps
	r.start(8, 1, 1536, 0)
	var want [][]byte
	for i := range 7 {
		f := frame(peerMAC, ownMAC, 1000+i, byte(i))
		a := uint32(bufs + i*2048)
		r.sys.Phys.Write(memory.Addr(a), f)
		r.putDesc(txRing, i, simoseth.DescOwn, simoseth.DescFirst|simoseth.DescLast|uint32(len(f)), a)
		want = append(want, withFCS(f))
	}
	r.out(simoseth.RegTxPoll, 1)
	r.k.Run()
	if d := cmp.Diff(want, r.w.sent); d != "" {
		t.Errorf("frames on the wire (-want +got):\n%s", d)
	}
	s := r.n.Stats()
	if s.TxWaits == 0 {
		t.Error("the transmit DMA never waited for buffer space")
	}
	// Two frames fit: the wire is never idle between frames.
	for i := 1; i < len(r.w.at); i++ {
		if gap, want := r.w.at[i]-r.w.at[i-1], r.w.rate.ByteTime(len(r.w.sent[i-1])); gap != want {
			t.Errorf("frame %d started %v after frame %d, want %v (back to back)", i, gap, i-1, want)
		}
	}
	r.noGuestErrors()
}

// deliver hands frames to the card at the given times.
func (r *rig) deliver(at sim.Time, f []byte) {
	ff := withFCS(f)
	r.k.Schedule(sim.NewEvent("rx", func() { r.n.Receive(ff) }), at)
}

// TestReceiveSpansAndWraps stores frames of several sizes through a ring
// of four 512-byte buffers: a frame takes as many descriptors as it
// needs, the first marked FIRST and the last LAST, each with the bytes it
// holds; the index wraps around the ring, and the driver's returning the
// descriptors keeps it going.
func TestReceiveSpansAndWraps(t *testing.T) {
	r := newRig(t, simoseth.DefaultParams())
	const bl = 512
	r.start(1, 4, bl, allInts)
	sizes := []int{100, 600, 1514, 60, 1024, 513, 512}
	var got [][]byte
	var descsPer []int
	next := 0
	for i, n := range sizes {
		r.deliver(r.k.Now(), frame(ownMAC, peerMAC, n, byte(i)))
		r.k.Run()
		// The driver's side: collect FIRST..LAST, give them back.
		var f []byte
		k := 0
		for {
			st := r.status(rxRing, next)
			if st&simoseth.DescOwn != 0 || st&simoseth.DescErr != 0 {
				t.Fatalf("frame %d: descriptor %d status %#x", i, next, st)
			}
			if (k == 0) != (st&simoseth.DescFirst != 0) {
				t.Fatalf("frame %d: descriptor %d FIRST flag wrong in %#x", i, next, st)
			}
			b := make([]byte, st&simoseth.DescLenMask)
			r.sys.Phys.Read(memory.Addr(bufs+next*bl), b)
			f = append(f, b...)
			r.putDesc(rxRing, next, simoseth.DescOwn, bl, uint32(bufs+next*bl))
			next = (next + 1) % 4
			k++
			if st&simoseth.DescLast != 0 {
				break
			}
		}
		got = append(got, f)
		descsPer = append(descsPer, k)
		if idx := r.in(simoseth.RegRxIndex); idx != uint32(next) {
			t.Errorf("frame %d: RXINDEX %d, want %d", i, idx, next)
		}
		r.out(simoseth.RegISR, simoseth.IntRx)
	}
	var want [][]byte
	for i, n := range sizes {
		want = append(want, frame(ownMAC, peerMAC, n, byte(i)))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("frames stored (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{1, 2, 3, 1, 2, 2, 1}, descsPer); d != "" {
		t.Errorf("descriptors per frame (-want +got):\n%s", d)
	}
	if s := r.n.Stats(); s.RxFrames != 7 || s.RxNoDescriptor != 0 {
		t.Errorf("stats %+v", s)
	}
	r.noGuestErrors()
}

// TestReceiveRingRunsOut: a ring of two descriptors the driver never
// returns stores two frames; the third finds none, is dropped and counted,
// the receiver suspends with IntRxNoBuf and drops what arrives until
// RXPOLL; then it stores into the returned descriptors again, from the
// index where it stopped (wrapped to 0).
func TestReceiveRingRunsOut(t *testing.T) {
	r := newRig(t, simoseth.DefaultParams())
	r.start(1, 2, 1536, allInts)
	for i := range 5 {
		r.deliver(sim.Time(i)*100*sim.Microsecond, frame(ownMAC, peerMAC, 200, byte(i)))
	}
	r.k.Run()
	s := r.n.Stats()
	if s.RxFrames != 2 || s.RxNoDescriptor != 3 {
		t.Errorf("stored %d, dropped for want of descriptors %d; want 2 and 3", s.RxFrames, s.RxNoDescriptor)
	}
	if isr := r.in(simoseth.RegISR); isr != simoseth.IntRx|simoseth.IntRxNoBuf {
		t.Errorf("ISR %#x, want IntRx|IntRxNoBuf", isr)
	}
	if st := r.in(simoseth.RegState) >> 8; st != simoseth.StateSuspended {
		t.Errorf("receive state %d, want suspended", st)
	}
	if m := r.in(simoseth.RegMissed); m != 3 {
		t.Errorf("MISSED %d, want 3", m)
	}
	if m := r.in(simoseth.RegMissed); m != 0 {
		t.Errorf("MISSED after a read %d, want 0 (reading clears)", m)
	}
	// Nothing of the dropped frames reached memory: the two buffers hold
	// frames 0 and 1.
	for i := range 2 {
		b := make([]byte, 200)
		r.sys.Phys.Read(memory.Addr(bufs+i*1536), b)
		if !bytes.Equal(b, frame(ownMAC, peerMAC, 200, byte(i))) {
			t.Errorf("buffer %d does not hold frame %d", i, i)
		}
	}
	r.putDesc(rxRing, 0, simoseth.DescOwn, 1536, bufs)
	r.putDesc(rxRing, 1, simoseth.DescOwn, 1536, bufs+1536)
	r.out(simoseth.RegRxPoll, 1)
	r.deliver(r.k.Now(), frame(ownMAC, peerMAC, 300, 9))
	r.k.Run()
	b := make([]byte, 300)
	r.sys.Phys.Read(bufs, b)
	if !bytes.Equal(b, frame(ownMAC, peerMAC, 300, 9)) || r.status(rxRing, 0) != simoseth.DescFirst|simoseth.DescLast|300 {
		t.Errorf("after RXPOLL: status %#x, frame not in descriptor 0", r.status(rxRing, 0))
	}
	r.noGuestErrors()
}

// TestReceiveBufferOverflow: with a slow DMA engine, frames arriving
// faster than it stores them fill the rx buffer; those that do not fit
// are dropped and counted, the others stored in order.
func TestReceiveBufferOverflow(t *testing.T) {
	p := simoseth.DefaultParams()
	p.DMARate = 1000 * 1000 // 1 MB/s: a 1000-byte frame takes 1 ms
	p.RxBuffer = 4 * sim.KiB
	r := newRig(t, p)
	r.start(1, 16, 1536, 0)
	for i := range 10 {
		r.deliver(sim.Time(i)*10*sim.Microsecond, frame(ownMAC, peerMAC, 1000, byte(i)))
	}
	r.k.Run()
	s := r.n.Stats()
	// One frame goes straight to the DMA, four more wait in the 4 KiB
	// buffer (the one being stored still occupies it), the rest overflow.
	if s.RxFrames != 4 || s.RxOverflow != 6 || s.RxFrames+s.RxOverflow != 10 {
		t.Errorf("stored %d, overflowed %d; want 4 and 6", s.RxFrames, s.RxOverflow)
	}
	for i := range int(s.RxFrames) {
		b := make([]byte, 1000)
		r.sys.Phys.Read(memory.Addr(bufs+i*1536), b)
		if !bytes.Equal(b, frame(ownMAC, peerMAC, 1000, byte(i))) {
			t.Errorf("descriptor %d does not hold frame %d", i, i)
		}
	}
	r.noGuestErrors()
}

// TestReceiveFilter: what the card keeps and what it drops, and why.
func TestReceiveFilter(t *testing.T) {
	tests := []struct {
		name  string
		ctrl  uint32
		frame []byte
		keep  bool
		count func(simoseth.Stats) uint64
	}{
		{"own address", simoseth.CtrlRxEn, withFCS(frame(ownMAC, peerMAC, 64, 0)), true, nil},
		{"another station", simoseth.CtrlRxEn, withFCS(frame(peerMAC, ownMAC, 64, 0)), false, func(s simoseth.Stats) uint64 { return s.RxFiltered }},
		{"another station, promiscuous", simoseth.CtrlRxEn | simoseth.CtrlProm, withFCS(frame(peerMAC, ownMAC, 64, 0)), true, nil},
		{"broadcast refused", simoseth.CtrlRxEn, withFCS(frame(bcastMAC, peerMAC, 64, 0)), false, func(s simoseth.Stats) uint64 { return s.RxFiltered }},
		{"broadcast accepted", simoseth.CtrlRxEn | simoseth.CtrlBcast, withFCS(frame(bcastMAC, peerMAC, 64, 0)), true, nil},
		{"multicast", simoseth.CtrlRxEn | simoseth.CtrlBcast, withFCS(frame(ethersim.MAC{1, 0, 0x5E, 0, 0, 1}, peerMAC, 64, 0)), false, func(s simoseth.Stats) uint64 { return s.RxFiltered }},
		{"bad FCS", simoseth.CtrlRxEn, func() []byte { f := withFCS(frame(ownMAC, peerMAC, 64, 0)); f[20] ^= 4; return f }(), false, func(s simoseth.Stats) uint64 { return s.RxCRCErrors }},
		{"runt", simoseth.CtrlRxEn, withFCS(frame(ownMAC, peerMAC, 40, 0)), false, func(s simoseth.Stats) uint64 { return s.RxRunts }},
		{"too long", simoseth.CtrlRxEn, withFCS(frame(ownMAC, peerMAC, 1515, 0)), false, func(s simoseth.Stats) uint64 { return s.RxTooLong }},
		{"receiver off", 0, withFCS(frame(ownMAC, peerMAC, 64, 0)), false, func(s simoseth.Stats) uint64 { return s.RxOffline }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, simoseth.DefaultParams())
			r.start(1, 4, 2048, 0)
			r.out(simoseth.RegCtrl, tt.ctrl)
			r.n.Receive(tt.frame)
			r.k.Run()
			s := r.n.Stats()
			if kept := s.RxFrames == 1; kept != tt.keep {
				t.Errorf("kept %v, want %v (stats %+v)", kept, tt.keep, s)
			}
			if tt.count != nil && tt.count(s) != 1 {
				t.Errorf("drop not counted where expected: %+v", s)
			}
			r.noGuestErrors()
		})
	}
}

// TestDMARate: the time from a frame's arrival to its receive interrupt is
// the engine's: one descriptor fetch, the frame and one status write-back
// (the interrupt comes when it is done) at dma_rate, plus dma_latency per
// transfer.
func TestDMARate(t *testing.T) {
	for _, tc := range []struct {
		rate    sim.Size
		latency sim.Time
	}{{1200 * 1000 * 1000, 0}, {120 * 1000 * 1000, 0}, {1200 * 1000 * 1000, 200 * sim.Nanosecond}} {
		p := simoseth.DefaultParams()
		p.DMARate, p.DMALatency = tc.rate, tc.latency
		r := newRig(t, p)
		r.start(1, 4, 2048, simoseth.IntRx)
		r.k.Run() // the transmitter's first fetch
		t0 := r.k.Now()
		r.deliver(t0, frame(ownMAC, peerMAC, 1514, 0))
		var at sim.Time
		for r.k.Step() {
			if r.irq.level && at == 0 {
				at = r.k.Now()
			}
		}
		d := r.n.Port().Duration
		if want := t0 + 3*tc.latency + d(16) + d(1514) + d(4); at != want {
			t.Errorf("rate %d latency %v: IntRx at %v, want %v", tc.rate, tc.latency, at, want)
		}
	}
}

// TestNonCoherentDMARead: a non-coherent card reading a buffer whose lines
// the CPU left dirty reports the driver's missing flush; a coherent card
// does not.
func TestNonCoherentDMARead(t *testing.T) {
	for _, coherent := range []bool{true, false} {
		p := simoseth.DefaultParams()
		p.Coherent = coherent
		r := newRig(t, p)
		r.start(2, 1, 1536, 0)
		f := frame(peerMAC, ownMAC, 100, 0)
		r.sys.Phys.Write(bufs, f)
		r.sys.Cache.Access(bufs+32, memory.Write) // a dirty line in the frame
		r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|simoseth.DescLast|100, bufs)
		r.out(simoseth.RegTxPoll, 1)
		r.k.Run()
		errs := r.sys.Guest.Records()
		if coherent && len(errs) != 0 || !coherent && (len(errs) != 1 || !strings.Contains(errs[0].Msg, "unflushed dirty line")) {
			t.Errorf("coherent %v: guest errors %v", coherent, errs)
		}
		if len(r.w.sent) != 1 {
			t.Errorf("coherent %v: %d frames sent", coherent, len(r.w.sent))
		}
	}
}

// TestMisprogramming: a driver's mistakes are guest errors with an error
// in the descriptor where there is one, never a panic, and the card goes
// on working.
func TestMisprogramming(t *testing.T) {
	tests := []struct {
		name   string
		do     func(r *rig)
		want   string // part of the first guest error
		status uint32 // expected status of tx descriptor 0 (when nonzero)
	}{
		{"byte access", func(r *rig) { r.n.Read(simoseth.RegISR, 1) }, "32-bit words", 0},
		{"reserved read", func(r *rig) { r.in(0x100) }, "reserved offset", 0},
		{"reserved write", func(r *rig) { r.out(0xB20, 1) }, "reserved offset", 0},
		{"read-only write", func(r *rig) { r.out(simoseth.RegTxIndex, 3) }, "read-only TXINDEX", 0},
		{"base while on", func(r *rig) { r.out(simoseth.RegTxBase, 0x5000) }, "while the transmitter is on", 0},
		{"zero count", func(r *rig) {
			r.out(simoseth.RegCtrl, 0)
			r.out(simoseth.RegRxCount, 0)
			r.out(simoseth.RegCtrl, simoseth.CtrlRxEn)
		}, "count must be 1", 0},
		{"misaligned ring", func(r *rig) {
			r.out(simoseth.RegCtrl, 0)
			r.out(simoseth.RegTxBase, txRing+4)
			r.out(simoseth.RegCtrl, simoseth.CtrlTxEn)
		}, "not 16-byte aligned", 0},
		{"ring outside memory", func(r *rig) {
			r.out(simoseth.RegCtrl, 0)
			r.out(simoseth.RegTxBase, 0xFFFFFF00)
			r.out(simoseth.RegCtrl, simoseth.CtrlTxEn)
		}, "exceeds physical memory", 0},
		{"no FIRST", func(r *rig) {
			r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescLast|100, bufs)
			r.out(simoseth.RegTxPoll, 1)
		}, "FIRST..LAST chain", simoseth.DescErr | simoseth.DescEFmt | simoseth.DescLast},
		{"too short", func(r *rig) {
			r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|simoseth.DescLast|10, bufs)
			r.out(simoseth.RegTxPoll, 1)
		}, "frame of 10 bytes", simoseth.DescErr | simoseth.DescELen | simoseth.DescFirst | simoseth.DescLast},
		{"too long", func(r *rig) {
			r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|simoseth.DescLast|1515, bufs)
			r.out(simoseth.RegTxPoll, 1)
		}, "frame of 1515 bytes", simoseth.DescErr | simoseth.DescELen | simoseth.DescFirst | simoseth.DescLast},
		{"buffer outside memory", func(r *rig) {
			r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|simoseth.DescLast|100, 0xFFFFF000)
			r.out(simoseth.RegTxPoll, 1)
		}, "exceeds physical memory", simoseth.DescErr | simoseth.DescEDMA | simoseth.DescFirst | simoseth.DescLast},
		{"half a chain", func(r *rig) {
			r.putDesc(txRing, 0, simoseth.DescOwn, simoseth.DescFirst|50, bufs)
			r.out(simoseth.RegTxPoll, 1)
		}, "not the card's", simoseth.DescOwn}, // left with the card, untouched
		{"zero-length receive buffer", func(r *rig) {
			r.putDesc(rxRing, 0, simoseth.DescOwn, 0, bufs)
			r.n.Receive(withFCS(frame(ownMAC, peerMAC, 100, 0)))
		}, "bad buffer length", 0},
		{"receive buffer outside memory", func(r *rig) {
			r.putDesc(rxRing, 0, simoseth.DescOwn, 1536, 0xFFFFFF00)
			r.n.Receive(withFCS(frame(ownMAC, peerMAC, 100, 0)))
		}, "exceeds physical memory", 0},
		{"poll with the receiver off", func(r *rig) {
			r.out(simoseth.RegCtrl, simoseth.CtrlTxEn)
			r.out(simoseth.RegRxPoll, 1)
		}, "receiver off", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, simoseth.DefaultParams())
			r.start(4, 4, 1536, allInts)
			r.k.Run()
			tt.do(r)
			r.k.Run()
			errs := r.sys.Guest.Records()
			if len(errs) == 0 || !strings.Contains(errs[0].Msg, tt.want) {
				t.Fatalf("guest errors %v, want one saying %q", errs, tt.want)
			}
			if tt.status != 0 {
				if got := r.status(txRing, 0); got != tt.status {
					t.Errorf("descriptor 0 status %#x, want %#x", got, tt.status)
				}
			}
			if r.n.IRQLevel() != (r.in(simoseth.RegISR)&r.in(simoseth.RegIMR) != 0) {
				t.Error("interrupt line disagrees with ISR & IMR")
			}
		})
	}
}

// TestReset: RESET stops both engines, empties the card, zeroes the
// registers and restores the station address; the card works again once
// programmed.
func TestReset(t *testing.T) {
	r := newRig(t, simoseth.DefaultParams())
	r.start(4, 4, 1536, allInts)
	r.out(simoseth.RegMACLo, 0x11223344)
	r.n.Receive(withFCS(frame(ownMAC, peerMAC, 100, 0)))
	r.out(simoseth.RegCtrl, simoseth.CtrlReset)
	for _, reg := range []uint64{simoseth.RegCtrl, simoseth.RegISR, simoseth.RegIMR, simoseth.RegTxBase, simoseth.RegRxCount, simoseth.RegState} {
		if v := r.in(reg); v != 0 {
			t.Errorf("register %#x = %#x after reset", reg, v)
		}
	}
	if lo, hi := r.in(simoseth.RegMACLo), r.in(simoseth.RegMACHi); lo != 0x00000002 || hi != 0x0100 {
		t.Errorf("MAC after reset %#x %#x", lo, hi)
	}
	r.k.Run()
	if r.n.Stats().RxFrames != 0 {
		t.Error("a frame in the card was stored after reset")
	}
	r.start(4, 4, 1536, allInts)
	r.n.Receive(withFCS(frame(ownMAC, peerMAC, 100, 0)))
	r.k.Run()
	if s := r.n.Stats(); s.RxFrames != 1 || s.Resets != 1 {
		t.Errorf("after reset and restart: %+v", s)
	}
	r.noGuestErrors()
}

func TestParamsValidate(t *testing.T) {
	with := func(f func(p *simoseth.Params)) simoseth.Params {
		p := simoseth.DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		p    simoseth.Params
		want string
	}{
		{simoseth.DefaultParams(), ""},
		{with(func(p *simoseth.Params) { p.MAC[0] = 1 }), "mac:"},
		{with(func(p *simoseth.Params) { p.DMARate = 10 }), "dma_rate:"},
		{with(func(p *simoseth.Params) { p.DMALatency = -1 }), "dma_latency:"},
		{with(func(p *simoseth.Params) { p.MaxFrame = 63 }), "max_frame:"},
		{with(func(p *simoseth.Params) { p.MaxFrame = 9018; p.RxBuffer = 4 * sim.KiB }), "rx_buffer:"},
		{with(func(p *simoseth.Params) { p.MaxFrame = 9018; p.TxBuffer = 4 * sim.KiB }), "tx_buffer:"},
	}
	for _, tt := range tests {
		err := tt.p.Validate()
		if (tt.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}
