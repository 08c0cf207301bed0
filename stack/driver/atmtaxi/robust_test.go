package atmtaxi_test

// The receive path under bad input: AAL5 PDUs with a bad CRC, length or
// LLC header, cells on unknown VCs, a receive FIFO overrun, and a driver
// that does not invalidate its DMA buffers.

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// cellFeeder sends cells into an end back to back from start.
type cellFeeder struct {
	end   *atmnet.End
	cells []atmnet.Cell
	i     int
}

func feed(k *sim.Scheduler, e *atmnet.End, start sim.Time, cells []atmnet.Cell) *cellFeeder {
	f := &cellFeeder{end: e, cells: cells}
	e.OnTxDone = f.next
	k.Schedule(sim.NewEvent("feed", f.next), start)
	return f
}

func (f *cellFeeder) next() {
	if f.i < len(f.cells) && !f.end.Busy() {
		f.end.Send(&f.cells[f.i])
		f.i++
	}
}

// udpSDU is an LLC/SNAP-encapsulated UDP datagram from ipA to ipB port 7.
func udpSDU(t *testing.T, payload []byte) []byte {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: ipA[:], DstIP: ipB[:]}
	udp := &layers.UDP{SrcPort: 9, DstPort: 7}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return append([]byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}, buf.Bytes()...)
}

// pduCellsOf cuts a CPCS-PDU into cells on vc.
func pduCellsOf(vc atmnet.VC, pdu []byte) []atmnet.Cell {
	var out []atmnet.Cell
	for off := 0; off < len(pdu); off += 48 {
		var c atmnet.Cell
		pt := uint8(0)
		if off+48 >= len(pdu) {
			pt = 1
		}
		c.SetWord(vc.Word(pt))
		copy(c[5:], pdu[off:])
		out = append(out, c)
	}
	return out
}

func aal5Of(sdu []byte, mutate func(p header.AAL5)) []byte {
	p := header.AAL5(make([]byte, header.AAL5PDULen(len(sdu))))
	copy(p, sdu)
	p.Encode(&header.AAL5Fields{Length: uint16(len(sdu))})
	if mutate != nil {
		mutate(p)
	}
	return p
}

// recrc makes the CRC match whatever the PDU now holds.
func recrc(p header.AAL5) { binary.BigEndian.PutUint32(p[len(p)-4:], p.CalculateCRC()) }

// Every bad PDU is dropped and counted by its reason; the good ones
// around them arrive.
func TestAAL5Drops(t *testing.T) {
	for _, assist := range []bool{false, true} {
		name := "software CRC"
		if assist {
			name = "CRC assist"
		}
		t.Run(name, func(t *testing.T) {
			k := sim.NewScheduler(1)
			m := loadMachine(t, "ds5000-200")
			dp := ipDriver(atm.PIO, atm.PIO)
			dp.CRCAssist = assist
			dp.VCs = []atm.VCEntry{{IP: atm.IP(ipA), VCI: 200}}
			ap := m.ATMP
			ap.AAL5CRC = assist
			b := newHost(t, k, m, "b", &dp, &ap)
			l, _ := atmnet.New(k).NewLink("b", atmnet.DefaultLinkParams())
			b.dev.SetLine(l.A())
			b.withIP(t, ipB, ipParams(atm.DefaultMTU))
			vc := atmnet.VC{VCI: 200}
			good := udpSDU(t, []byte("the first good datagram"))
			good2 := udpSDU(t, bytes.Repeat([]byte("x"), 300))
			var cells []atmnet.Cell
			add := func(p []byte) { cells = append(cells, pduCellsOf(vc, p)...) }
			add(aal5Of(good, nil))
			add(aal5Of(good2, func(p header.AAL5) { p[60] ^= 4 }))                                             // bad CRC
			add(aal5Of(good2, func(p header.AAL5) { binary.BigEndian.PutUint16(p[len(p)-6:], 10); recrc(p) })) // length: one cell
			add(aal5Of(good2, func(p header.AAL5) { binary.BigEndian.PutUint16(p[len(p)-6:], 0); recrc(p) }))  // abort
			add(aal5Of(good2, func(p header.AAL5) { p[len(p)-7] = 1; recrc(p) }))                              // CPI
			bridged := append([]byte{0xAA, 0xAA, 0x03, 0x00, 0x80, 0xC2, 0x00, 0x07}, good[8:]...)
			add(aal5Of(bridged, nil))                                   // not routed
			stray := pduCellsOf(atmnet.VC{VCI: 999}, aal5Of(good, nil)) // no such VC
			cells = append(cells, stray...)
			add(aal5Of(good2, nil))
			var got [][]byte
			b.kern.Spawn("rx", func(th *kernel.Thread) {
				s := b.ip
				fd, _ := s.Socket(th, inet.SockDgram)
				s.Bind(th, fd, 7)
				buf := b.kern.Kmalloc(2048)
				for range 2 {
					n, _, _, err := s.RecvFrom(th, fd, buf, 2048, sim.Second)
					if err != 0 {
						t.Error(err)
						return
					}
					p := make([]byte, n)
					b.sys.Phys.Read(buf, p)
					got = append(got, p)
				}
			})
			feed(k, l.B(), sim.Millisecond, cells)
			k.RunUntil(2 * sim.Second)
			if len(got) != 2 || string(got[0]) != "the first good datagram" || len(got[1]) != 300 {
				t.Errorf("delivered %q", got)
			}
			ds := b.drv.Stats()
			if ds.RxBadCRC != 1 || ds.RxBadLength != 3 || ds.RxBadLLC != 1 || ds.RxNoVC != uint64(len(stray)) || ds.RxPDUs != 3 {
				t.Errorf("bad CRC %d (want 1), bad length %d (3), bad LLC %d (1), cells on no VC %d (%d), PDUs %d (3)",
					ds.RxBadCRC, ds.RxBadLength, ds.RxBadLLC, ds.RxNoVC, len(stray), ds.RxPDUs)
			}
			b.noGuestErrors(t)
			b.c.Shutdown()
		})
	}
}

// A PDU longer than the receive FIFO, with interrupts only on the header
// flag, overruns it: the lost cells are counted, the PDU is dropped, and
// the next PDUs arrive (the MSNL-like SAR resynchronises on a cell
// numbered 0; AAL5 drops what the lost end cell merged).
func TestReceiveOverrun(t *testing.T) {
	k := sim.NewScheduler(1)
	m := loadMachine(t, "ds5000-200")
	h := newHost(t, k, m, "ds", nil, nil)
	h.dev.SetLine(loopCable(t, atmnet.New(k), "lo0").A())
	var got []int
	var sock *atm.RawSocket
	opened := &kernel.WaitQueue{}
	h.kern.Spawn("sender", func(th *kernel.Thread) {
		var err error
		if sock, err = h.drv.OpenRaw(th, pduVC, false); err != nil {
			t.Error(err)
			return
		}
		h.kern.Wakeup(opened)
		buf := h.kern.Kmalloc(128 * 48)
		for _, cells := range []int{120, 70, 30, 70} {
			if err := sock.Send(th, buf, cells*48); err != nil {
				t.Error(err)
			}
			th.SleepFor(10 * sim.Millisecond)
		}
	})
	h.kern.Spawn("receiver", func(th *kernel.Thread) {
		for sock == nil {
			th.Sleep(opened)
		}
		buf := h.kern.Kmalloc(128 * 48)
		for range 3 {
			n, _ := sock.Recv(th, buf, 128*48)
			got = append(got, n/48)
		}
	})
	k.RunUntil(sim.Second)
	if want := []int{70, 30, 70}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("PDUs received %v cells, want %v", got, want)
	}
	ds, dv := h.drv.Stats(), h.dev.Stats()
	if ds.Overruns == 0 || ds.LostCells == 0 || ds.LostCells != dv.RxOverflow || ds.RxBroken != 1 {
		t.Errorf("overruns %d, lost cells %d (board %d), broken PDUs %d", ds.Overruns, ds.LostCells, dv.RxOverflow, ds.RxBroken)
	}
	t.Logf("120-cell PDU into a 76-cell FIFO: %d overruns, %d cells lost, %d sequence errors", ds.Overruns, ds.LostCells, ds.RxSeqErrors)
	h.noGuestErrors(t)
	h.c.Shutdown()
}

// Without the invalidation before reading, the CPU reads lines the board
// overwrote by DMA while they were cached: reported as guest errors (the
// seed's unsolved cache problem on Ultrix). With it, none (the other
// tests).
func TestStaleWithoutInvalidate(t *testing.T) {
	dp := loadMachine(t, "ds5000-200").Driver
	dp.Rx, dp.CacheInvalidate = atm.DMAB, false
	_, h := runLoopback(t, loopCase{machine: "ds5000-200", dp: dp, allowGuest: true}, 1, 3)
	recs := h.sys.Guest.Records()
	if h.sys.Guest.Count() == 0 || !strings.Contains(recs[0].Msg, "stale") {
		t.Fatalf("no stale read reported: %d guest errors", h.sys.Guest.Count())
	}
	t.Logf("%d stale reads, first: %v", h.sys.Guest.Count(), recs[0])
}
