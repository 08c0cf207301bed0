package atmtaxi_test

// The seed's proposed hardware assists (docs/reference/atm-taxi.md sec. 6), measured:
// the loop-back exchange with AAL5 instead of the MSNL-like SAR (the
// CRC-32 in software, then by the board), with header insertion on
// transmit, and with VCI sorting on receive; and the receive rate when
// the cells of two PDUs from two senders arrive interleaved through the
// switch, reassembled in software or sorted by the board.

import (
	"testing"

	"simkron/ethersim/atmnet"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/kernel"
)

func TestAssistsLoopback(t *testing.T) {
	m := loadMachine(t, "ds5000-25")
	fitted := m.ATMP
	fitted.HeaderInsertion, fitted.AAL5CRC, fitted.VCISort = true, true, true
	type variant struct {
		name           string
		tx, rx         string
		crc, insert    bool
		aal5, assisted bool
	}
	vs := []variant{
		{name: "msnl (the seed's SAR)", tx: atm.PIO, rx: atm.PIO},
		{name: "aal5, software CRC", tx: atm.PIO, rx: atm.PIO, aal5: true},
		{name: "aal5, CRC assist", tx: atm.PIO, rx: atm.PIO, aal5: true, crc: true, assisted: true},
		{name: "aal5, CRC + header insertion", tx: atm.PIO, rx: atm.PIO, aal5: true, crc: true, insert: true, assisted: true},
		{name: "aal5, CRC + insertion, DMA", tx: atm.DMAA, rx: atm.DMAB, aal5: true, crc: true, insert: true, assisted: true},
		{name: "aal5, CRC + insertion, DMA, sort", tx: atm.DMAA, rx: atm.Sort, aal5: true, crc: true, insert: true, assisted: true},
	}
	res := map[string]stages{}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			dp := m.Driver
			dp.Tx, dp.Rx, dp.CRCAssist, dp.HeaderInsertion = v.tx, v.rx, v.crc, v.insert
			lc := loopCase{machine: "ds5000-25", dp: dp, aal5: v.aal5}
			if v.assisted {
				lc.ap = &fitted
			}
			s, h := runLoopback(t, lc, 2, 6)
			t.Logf("%s: %v", v.name, s)
			res[v.name] = s
			if st := h.dev.Stats(); v.crc && st.TxCRCPDUs == 0 {
				t.Error("the TX CRC assist filled in no CRC")
			}
		})
	}
	sw, hw := res["aal5, software CRC"], res["aal5, CRC assist"]
	ins := res["aal5, CRC + header insertion"]
	seed := res["msnl (the seed's SAR)"]
	// The software CRC costs a table lookup per byte on both paths; the
	// assist takes it away; header insertion takes the 70 header stores.
	if !(sw.txRate() < hw.txRate() && sw.rxRate() < hw.rxRate() && hw.txRate() < ins.txRate()) {
		t.Errorf("tx/rx Mbit/s: software CRC %.1f/%.1f, CRC assist %.1f/%.1f, with insertion %.1f",
			sw.txRate(), sw.rxRate(), hw.txRate(), hw.rxRate(), ins.txRate())
	}
	if hw.txRate() < 0.9*seed.txRate() {
		t.Errorf("AAL5 with the CRC assist sends at %.1f Mbit/s, the seed's SAR at %.1f", hw.txRate(), seed.txRate())
	}
}

// TestInterleavedReceive: two Wanda hosts send a 35-cell AAL5 PDU each at
// the same instant, through the switch, to one receiver, whose link
// carries their cells interleaved. The receive time of the pair runs from
// the first cell's arrival to the second PDU's delivery.
func TestInterleavedReceive(t *testing.T) {
	m := loadMachine(t, "ds5000-25")
	fitted := m.ATMP
	fitted.AAL5CRC, fitted.VCISort = true, true
	rates := map[string]float64{}
	defer func() {
		if p, s := rates["two senders, pio, flag interrupts"], rates["two senders, sort"]; p == 0 || s < 2*p {
			t.Errorf("two interleaved senders: sorted %.1f Mbit/s, software reassembly %.1f", s, p)
		}
	}()
	for _, tc := range []struct {
		name    string
		rx, irq string
		crc     bool
		senders int
	}{
		{"one sender, pio", atm.PIO, atm.IntFlag, false, 1},
		{"two senders, pio, flag interrupts", atm.PIO, atm.IntFlag, false, 2},
		{"two senders, pio, cell interrupts", atm.PIO, atm.IntCell, false, 2},
		{"two senders, pio, CRC assist", atm.PIO, atm.IntFlag, true, 2},
		{"two senders, dma-b", atm.DMAB, atm.IntFlag, false, 2},
		{"one sender, sort", atm.Sort, atm.IntFlag, true, 1},
		{"two senders, sort", atm.Sort, atm.IntFlag, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := sim.NewScheduler(1)
			net := atmnet.New(k)
			sw, _ := net.NewSwitch("sw0", atmnet.DefaultSwitchParams())
			lr, _ := net.NewLink("r", atmnet.DefaultLinkParams())
			sw.Connect(lr.B())
			dp := m.Driver
			dp.Rx, dp.RxInterrupt, dp.CRCAssist = tc.rx, tc.irq, tc.crc
			r := newHost(t, k, m, "r", &dp, &fitted)
			r.dev.SetLine(lr.A())
			cells := 70 / tc.senders
			sdu := cells*48 - 8
			const rounds = 8
			const period = 20 * sim.Millisecond
			var senders []*host
			for i := range tc.senders {
				l, _ := net.NewLink("s"+string(rune('1'+i)), atmnet.DefaultLinkParams())
				port, _ := sw.Connect(l.B())
				if err := sw.Route(port, atmnet.VC{VCI: 100}, 0, atmnet.VC{VCI: uint16(100 + i)}); err != nil {
					t.Fatal(err)
				}
				sp := m.Driver
				s := newHost(t, k, m, "s"+string(rune('1'+i)), &sp, nil)
				s.dev.SetLine(l.A())
				senders = append(senders, s)
				s.kern.Spawn("send", func(th *kernel.Thread) {
					sock, err := s.drv.OpenRaw(th, atm.VC{VCI: 100}, true)
					if err != nil {
						t.Error(err)
						return
					}
					buf, _ := sock.AllocIPC(th)
					s.c.Write(buf, patterned(i, sdu))
					for range rounds {
						th.SleepFor(period - sim.Time(k.Now()%period))
						if err := sock.Send(th, buf, sdu); err != nil {
							t.Error(err)
						}
					}
				})
			}
			// The first cell of each round at r, and each delivery.
			first := make([]sim.Time, rounds)
			net.Trace.Connect(func(x atmnet.TraceRecord) {
				if x.Kind == atmnet.TraceRx && x.Where == "r.a" {
					if i := int(x.At / period); i >= 1 && i <= rounds && first[i-1] == 0 {
						first[i-1] = x.At
					}
				}
			})
			done := make([]sim.Time, rounds)
			got := 0
			for i := range tc.senders {
				r.kern.Spawn("recv", func(th *kernel.Thread) {
					sock, err := r.drv.OpenRaw(th, atm.VC{VCI: uint16(100 + i)}, true)
					if err != nil {
						t.Error(err)
						return
					}
					want := patterned(i, sdu)
					for j := range rounds {
						b, n, _ := sock.RecvIPC(th)
						p := make([]byte, n)
						r.sys.Phys.Read(b, p)
						if string(p) != string(want) {
							t.Errorf("round %d, VC %d: the PDU differs", j, 100+i)
						}
						got++
						done[j] = max(done[j], r.c.LocalTime())
						sock.ReleaseIPC(th, b)
					}
				})
			}
			k.RunUntil(sim.Time(rounds+2) * period)
			if got != rounds*tc.senders {
				t.Fatalf("%d PDUs delivered, want %d; r: %+v", got, rounds*tc.senders, r.drv.Stats())
			}
			var sum sim.Time
			for j := 1; j < rounds; j++ { // the first round warms the caches
				sum += done[j] - first[j]
			}
			rx := sum / (rounds - 1)
			rates[tc.name] = mbps(float64(70/tc.senders*tc.senders*48*8), rx)
			t.Logf("%s: %d cells received in %v: %.1f Mbit/s of cell payload", tc.name, 70/tc.senders*tc.senders, rx, rates[tc.name])
			r.noGuestErrors(t)
			for _, s := range senders {
				s.noGuestErrors(t)
				s.c.Shutdown()
			}
			r.c.Shutdown()
		})
	}
}
