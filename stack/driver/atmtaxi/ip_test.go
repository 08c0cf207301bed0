package atmtaxi_test

// IP over ATM: two DECstations through an ATM switch, classical IP over
// AAL5 with RFC 2684 LLC/SNAP and a static VC per neighbour.
//
//	a ── link a ── port 0 ┐              ┌ port 1 ── link b ── b
//	  VC 0/100             └─ switch sw0 ─┘          VC 0/200
//
// The switch maps 0/100 on port 0 to 0/200 on port 1 and back.

import (
	"bytes"
	"testing"

	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

var (
	ipA = inet.Addr{10, 1, 0, 1}
	ipB = inet.Addr{10, 1, 0, 2}
)

type ipPair struct {
	k    *sim.Scheduler
	net  *atmnet.Network
	sw   *atmnet.Switch
	a, b *host
	la   *atmnet.Link
	lb   *atmnet.Link
}

// ipRig builds the two hosts on machine with the driver's paths set by
// dp (its VC tables are filled in here) and inet parameters ip.
func ipRig(t testing.TB, machine string, dp atm.Params, ip inet.Params) *ipPair {
	t.Helper()
	return ipRigP(t, machine, dp, ip, false)
}

// ipRigP is ipRig with the board's assists fitted when assists is set;
// a PCR in dp.VCs[0] paces both hosts' VCs.
func ipRigP(t testing.TB, machine string, dp atm.Params, ip inet.Params, assists bool) *ipPair {
	t.Helper()
	k := sim.NewScheduler(1)
	r := &ipPair{k: k, net: atmnet.New(k)}
	var err error
	if r.sw, err = r.net.NewSwitch("sw0", atmnet.DefaultSwitchParams()); err != nil {
		t.Fatal(err)
	}
	if r.la, err = r.net.NewLink("a", atmnet.DefaultLinkParams()); err != nil {
		t.Fatal(err)
	}
	if r.lb, err = r.net.NewLink("b", atmnet.DefaultLinkParams()); err != nil {
		t.Fatal(err)
	}
	for _, e := range []*atmnet.End{r.la.B(), r.lb.B()} {
		if _, err := r.sw.Connect(e); err != nil {
			t.Fatal(err)
		}
	}
	va, vb := atmnet.VC{VCI: 100}, atmnet.VC{VCI: 200}
	if err := r.sw.Route(0, va, 1, vb); err != nil {
		t.Fatal(err)
	}
	if err := r.sw.Route(1, vb, 0, va); err != nil {
		t.Fatal(err)
	}
	m := loadMachine(t, machine)
	pa, pb := dp, dp
	pcr := 0 // a peak cell rate in dp.VCs[0] paces both hosts' VCs
	if len(dp.VCs) > 0 {
		pcr = dp.VCs[0].PCR
	}
	pa.VCs = []atm.VCEntry{{IP: atm.IP(ipB), VPI: 0, VCI: 100, PCR: pcr}}
	pb.VCs = []atm.VCEntry{{IP: atm.IP(ipA), VPI: 0, VCI: 200, PCR: pcr}}
	var ap *devatm.Params
	if assists {
		p := m.ATMP
		p.HeaderInsertion, p.AAL5CRC, p.VCISort = true, true, true
		ap = &p
	}
	r.a = newHost(t, k, m, "a", &pa, ap)
	r.b = newHost(t, k, m, "b", &pb, ap)
	r.a.dev.SetLine(r.la.A())
	r.b.dev.SetLine(r.lb.A())
	r.a.withIP(t, ipA, ip)
	r.b.withIP(t, ipB, ip)
	return r
}

// pattern is the byte at stream offset i: position-dependent, so a byte
// delivered twice, lost or out of order shows.
func pattern(i int) byte { return byte(i*131 + i>>9) }

func patterned(off, n int) []byte {
	p := make([]byte, n)
	for j := range p {
		p[j] = pattern(off + j)
	}
	return p
}

// ipParams returns classical IP's parameters: MTU 9180 unless mtu says.
func ipParams(mtu int) inet.Params {
	p := inet.DefaultParams()
	p.MTU = mtu
	return p
}

func atmFaults(loss float64) atmnet.FaultParams { return atmnet.FaultParams{CellLoss: loss} }

func ipDriver(tx, rx string) atm.Params {
	dp := atm.DefaultParams()
	dp.Tx, dp.Rx, dp.RxInterrupt = tx, rx, atm.IntCell
	return dp
}

func TestUDPOverATM(t *testing.T) {
	// A PIO receiver takes about 20 us a cell, a PIO sender gives one
	// every 8 us: the receive FIFO's 76 cells fill after about 125 cells
	// sent back to back (TestReceiveOverrun), so PIO to PIO runs at an MTU
	// whose PDUs (92 cells at 4352) fit, and without a datagram IP cuts
	// into fragments that leave back to back. A mode-A sender, whose
	// formatting copy overlaps its DMA, fills the line (a cell every
	// 4.2 us) and a mode-B receiver takes about 10 us a cell: it too keeps
	// to PDUs of 92 cells. The PIO sender and the mode-B receiver take
	// 9180 and fragments.
	for _, tc := range []struct {
		name, tx, rx string
		mtu          int
		frag         bool
	}{
		{"pio", atm.PIO, atm.PIO, 4352, false},
		{"dma", atm.DMAA, atm.DMAB, 4352, false},
		{"pio to dma-b", atm.PIO, atm.DMAB, atm.DefaultMTU, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ipRig(t, "ds5000-200", ipDriver(tc.tx, tc.rx), ipParams(tc.mtu))
			// Sizes around the cell and MTU boundaries, and datagrams IP
			// fragments (mtu - 28 bytes fit one PDU).
			sizes := []int{1, 12, 40, 41, 1472, 4000, tc.mtu - 28}
			frags := 0
			if tc.frag {
				sizes, frags = append(sizes, tc.mtu-27, 20000), 2
			}
			var got [][]byte
			r.b.kern.Spawn("rx", func(th *kernel.Thread) {
				s := r.b.ip
				fd, _ := s.Socket(th, inet.SockDgram)
				if err := s.Bind(th, fd, 7); err != 0 {
					t.Error(err)
					return
				}
				buf := r.b.kern.Kmalloc(32768)
				for range sizes {
					n, from, _, err := s.RecvFrom(th, fd, buf, 32768, sim.Second)
					if err != 0 || from != ipA {
						t.Errorf("recvfrom: %v from %v", err, from)
						return
					}
					p := make([]byte, n)
					r.b.sys.Phys.Read(buf, p)
					got = append(got, p)
				}
			})
			r.a.kern.Spawn("tx", func(th *kernel.Thread) {
				s := r.a.ip
				fd, _ := s.Socket(th, inet.SockDgram)
				buf := r.a.kern.Kmalloc(32768)
				for i, n := range sizes {
					r.a.c.Write(buf, patterned(i, n))
					if _, err := s.SendTo(th, fd, buf, n, ipB, 7); err != 0 {
						t.Errorf("sendto %d bytes: %v", n, err)
					}
					th.SleepFor(20 * sim.Millisecond)
				}
			})
			r.k.RunUntil(5 * sim.Second)
			if len(got) != len(sizes) {
				t.Fatalf("%d datagrams arrived, want %d; b's driver %+v", len(got), len(sizes), r.b.drv.Stats())
			}
			for i, n := range sizes {
				if !bytes.Equal(got[i], patterned(i, n)) {
					t.Errorf("datagram %d (%d bytes) differs", i, n)
				}
			}
			st := r.b.ip.Stats()
			if st.UDPInDatagrams != uint64(len(sizes)) || st.IPReasmOKs != uint64(frags) || st.UDPInBadChecksum != 0 {
				t.Errorf("b's UDP: %d datagrams, %d reassembled, %d bad checksums", st.UDPInDatagrams, st.IPReasmOKs, st.UDPInBadChecksum)
			}
			if ds := r.a.drv.Stats(); ds.RxBadCRC+ds.RxBadLength+ds.RxBadLLC != 0 {
				t.Errorf("a's driver: %+v", ds)
			}
			r.a.noGuestErrors(t)
			r.b.noGuestErrors(t)
			r.a.c.Shutdown()
			r.b.c.Shutdown()
		})
	}
}

// tcpTransfer moves total bytes from a to b over one connection and
// returns what b read.
func tcpTransfer(t *testing.T, r *ipPair, total int, limit sim.Time) []byte {
	t.Helper()
	done := false
	got := runTCP(t, r, total, &done)
	r.k.RunWhile(func() bool { return !done && r.k.Now() < limit })
	if !done {
		t.Fatalf("transfer not done by %v: %d of %d bytes", limit, len(*got), total)
	}
	return *got
}

// runTCP spawns a client on a sending total patterned bytes and a server
// on b reading them; done is set when the server has read to the end.
func runTCP(t testing.TB, r *ipPair, total int, done *bool) *[]byte {
	got := new([]byte)
	r.b.kern.Spawn("server", func(th *kernel.Thread) {
		s := r.b.ip
		lfd, _ := s.Socket(th, inet.SockStream)
		s.Bind(th, lfd, 5001)
		s.Listen(th, lfd, 1)
		fd, _, _, err := s.Accept(th, lfd)
		if err != 0 {
			t.Error(err)
			return
		}
		buf := r.b.kern.Kmalloc(65536)
		p := make([]byte, 65536)
		for {
			n, err := s.Recv(th, fd, buf, 65536, 0)
			if err != 0 {
				t.Errorf("recv: %v", err)
				return
			}
			if n == 0 {
				break
			}
			r.b.sys.Phys.Read(buf, p[:n])
			*got = append(*got, p[:n]...)
		}
		s.Close(th, fd)
		*done = true
	})
	r.a.kern.Spawn("client", func(th *kernel.Thread) {
		s := r.a.ip
		fd, _ := s.Socket(th, inet.SockStream)
		if err := s.Connect(th, fd, ipB, 5001); err != 0 {
			t.Errorf("connect: %v", err)
			return
		}
		const chunk = 65536
		buf := r.a.kern.Kmalloc(chunk)
		for off := 0; off < total; {
			n := min(chunk, total-off)
			r.a.sys.Phys.Write(buf, patterned(off, n))
			for sent := 0; sent < n; {
				k, err := s.Send(th, fd, buf+memory.Addr(sent), n-sent)
				if err != 0 {
					t.Errorf("send: %v", err)
					return
				}
				sent += k
			}
			off += n
		}
		s.Close(th, fd)
	})
	return got
}

// TCP between the two hosts moves a MiB intact on the base board and
// with the receive assists. PIO into DMA mode B overruns the receiver's
// FIFO now and then (the sender gives a cell every 8 us, the receiver
// takes one every 9.5): TCP retransmits what the overruns cost.
func TestTCPOverATM(t *testing.T) {
	for _, tc := range []struct {
		name, tx, rx string
		assists      bool
	}{
		{"pio to dma-b", atm.PIO, atm.DMAB, false},
		{"pio to sort", atm.PIO, atm.Sort, true},
		{"dma-a with header insertion to sort", atm.DMAA, atm.Sort, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dp := ipDriver(tc.tx, tc.rx)
			dp.CRCAssist, dp.HeaderInsertion = tc.assists, tc.assists
			r := ipRigP(t, "ds5000-200", dp, ipParams(atm.DefaultMTU), tc.assists)
			const total = 1 << 20
			got := tcpTransfer(t, r, total, 60*sim.Second)
			if !bytes.Equal(got, patterned(0, total)) {
				t.Fatalf("the %d bytes received differ from the %d sent", len(got), total)
			}
			ds := r.b.drv.Stats()
			t.Logf("1 MiB in %v: %.1f Mbit/s; b: %d PDUs, %d overruns, %d bad CRC", r.k.Now(), mbps(8*total, r.k.Now()), ds.RxPDUs, ds.Overruns, ds.RxBadCRC)
			if tc.rx == atm.Sort && (ds.SortPDUs == 0 || ds.RxCells != 0) {
				t.Errorf("sorted receive: %d completions, %d cells through the FIFO", ds.SortPDUs, ds.RxCells)
			}
			r.a.noGuestErrors(t)
			r.b.noGuestErrors(t)
			r.a.c.Shutdown()
			r.b.c.Shutdown()
		})
	}
}

// TCP moves 10 MB under 1% cell loss in both directions: one lost cell
// loses its whole AAL5 PDU (a bad CRC or length at the receiver), and TCP
// retransmits until every byte is delivered once, in order. The MTU is
// 1500 (32-cell segments, 72% of which survive): at 9180 a segment's 192
// cells all arrive only 14.5% of the time, and TCP crawls.
func TestTCPCellLoss(t *testing.T) {
	r := ipRig(t, "ds5000-200", ipDriver(atm.PIO, atm.PIO), ipParams(1500))
	for _, e := range []*atmnet.End{r.la.A(), r.lb.A()} {
		if err := e.SetFaults(atmFaults(0.01)); err != nil {
			t.Fatal(err)
		}
	}
	const total = 10_000_000
	got := tcpTransfer(t, r, total, 4*3600*sim.Second)
	if len(got) != total || !bytes.Equal(got, patterned(0, total)) {
		t.Fatalf("%d bytes received, want the %d sent, once and in order", len(got), total)
	}
	lost := r.la.A().Stats().Lost + r.lb.A().Stats().Lost
	da, db := r.a.drv.Stats(), r.b.drv.Stats()
	bad := da.RxBadCRC + da.RxBadLength + db.RxBadCRC + db.RxBadLength
	st := r.a.ip.Stats()
	t.Logf("10 MB in %v with %d cells lost: %d PDUs dropped by AAL5, %d segments retransmitted (%d timeouts)", r.k.Now(), lost, bad, st.TCPRetransSegs, st.TCPTimeouts)
	if lost == 0 || bad == 0 || bad > lost || st.TCPRetransSegs == 0 {
		t.Errorf("lost cells %d, AAL5 drops %d, retransmissions %d", lost, bad, st.TCPRetransSegs)
	}
	r.a.noGuestErrors(t)
	r.b.noGuestErrors(t)
	r.a.c.Shutdown()
	r.b.c.Shutdown()
}
