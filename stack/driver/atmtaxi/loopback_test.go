package atmtaxi_test

// The seed's loop-back test (docs/reference/atm-taxi.md sec. 5): one
// DECstation whose TAXI transmitter is cabled to its own receiver; a
// sender process sends a 70-cell PDU through a raw ATM socket, a
// receiver process takes it and answers with a one-cell ACK, repeated.
// The stages of one cycle (the seed's Figure 3) are read with the core's
// hooks, which only look:
//
//	A  send:     the sender enters its send call → the PDU's last cell is
//	             in the transmit FIFO (yes_output returns)
//	B  line:     → the receive interrupt (the header-flag cell is in)
//	C  receive:  → the receiver's receive call returns (copy-out done)
//	D  ACK:      → the sender enters its next send (the ACK's way back)
//
// The sustained rates are derived as the seed derives them (and as the
// workload, stack/apps/yesv2, does): T is the PDU's cells crossing into
// the transmit FIFO, R out of the receive FIFO (the board's FIFO
// observer), O the rest of the cycle, the operating-system and user
// overhead, split equally: transmit = PDU payload bits / (T + O/2),
// receive = PDU payload bits / (R + O/2). The DMA transfer rates are the
// PDU payload over the board's DMA busy time in that direction
// (dma_latency and transfer, as the board runs them, per PDU).

import (
	"fmt"
	"strings"
	"testing"

	"simkron/card"
	"simkron/cpu"
	devatm "simkron/devices/atmtaxi"
	"simkron/ethersim/atmnet"
	"simkron/memory"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/kernel"
)

const (
	pduCells = 70
	pduBytes = pduCells * 48
	pduBits  = pduBytes * 8
)

var (
	pduVC = atm.VC{VPI: 0, VCI: 100}
	ackVC = atm.VC{VPI: 0, VCI: 101}
)

// stages holds the averaged stage durations of the measured cycles and
// the FIFO intervals T and R.
type stages struct {
	A, B, C, D, Cycle sim.Time
	T, R              sim.Time
	TxDMA, RxDMA      float64 // Mbit/s of payload over DMA busy time; 0 when unused
	Cycles            int
}

// overhead is the cycle less T and R.
func (s stages) overhead() sim.Time { return max(0, s.Cycle-s.T-s.R) }

func (s stages) txRate() float64    { return mbps(pduBits, s.T+s.overhead()/2) }
func (s stages) rxRate() float64    { return mbps(pduBits, s.R+s.overhead()/2) }
func (s stages) cycleRate() float64 { return 1 / s.Cycle.Seconds() }

// loopCase is one configuration of the exchange.
type loopCase struct {
	machine string
	dp      atm.Params
	ap      *devatm.Params // the board's table, nil: the machine file's
	aal5    bool           // AAL5 sockets instead of the MSNL-like SAR
	// allowGuest lets the run report guest errors (the caller checks).
	allowGuest bool
}

// runLoopback runs warm+n cycles of the exchange and returns the
// averages of the last n.
func runLoopback(t *testing.T, lc loopCase, warm, n int) (stages, *host) {
	t.Helper()
	k := sim.NewScheduler(1)
	machine, dp := lc.machine, lc.dp
	m := loadMachine(t, machine)
	h := newHost(t, k, m, "ds", &dp, lc.ap)
	h.dev.SetLine(loopCable(t, atmnet.New(k), "lo0").A())

	type mark struct {
		a0, a1, b1, c1 sim.Time
		tx0, tx1       sim.Time // the PDU's cells entering the transmit FIFO
		rx0, rx1       sim.Time // and leaving the receive FIFO
		txN, rxN       int
	}
	var marks []mark
	var cur mark
	var started bool
	var endAt sim.Time
	phase := 0 // 0: before send; 1: in A; 2: waiting for the interrupt; 3: in C
	total := warm + n
	atmLine := m.ATM.IRQ
	c := h.c
	c.Trace.Enter.Connect(func(s *cpu.Symbol) {
		x := c.Current()
		if s.Name == "sys_atm_send" && strings.HasSuffix(x.Name(), ".sender") && phase == 0 {
			if started {
				marks = append(marks, cur)
			}
			cur, started = mark{a0: c.LocalTime()}, true
			phase = 1
		}
	})
	c.Trace.Exit.Connect(func(s *cpu.Symbol) {
		x := c.Current()
		switch {
		case phase == 1 && s.Name == "yes_output" && strings.HasSuffix(x.Name(), ".sender"):
			cur.a1 = c.LocalTime()
			phase = 2
		case phase == 3 && s.Name == "sys_atm_recv" && strings.HasSuffix(x.Name(), ".receiver"):
			cur.c1 = c.LocalTime()
			phase = 0
		}
	})
	c.Trace.Interrupt.Connect(func(ev cpu.Interrupt) {
		if ev.Entry && ev.Line == atmLine && phase == 2 {
			cur.b1 = c.LocalTime()
			phase = 3
		}
	})
	h.dev.FIFO.Connect(func(f card.FIFOCell) {
		tx, vci, begin, end := f.Tx, f.VCI, f.Begin, f.End
		if !started || vci != pduVC.VCI {
			return
		}
		if tx {
			if cur.txN == 0 {
				cur.tx0 = begin
			}
			cur.tx1, cur.txN = max(cur.tx1, end), cur.txN+1
			return
		}
		if cur.rxN == 0 {
			cur.rx0 = begin
		}
		cur.rx1, cur.rxN = max(cur.rx1, end), cur.rxN+1
	})

	var pdu, ack *atm.RawSocket
	wanda := dp.Personality == atm.Wanda
	// An AAL5 PDU of 70 cells carries 70 × 48 − 8 bytes, an ACK of one
	// cell 40.
	sendLen, ackLen := pduBytes, 48
	if lc.aal5 {
		sendLen, ackLen = pduBytes-8, 40
	}
	var dmaTx0, dmaRx0 sim.Time
	ready := &kernel.WaitQueue{}
	opened := false
	h.kern.Spawn("sender", func(th *kernel.Thread) {
		var err error
		if pdu, err = h.drv.OpenRaw(th, pduVC, lc.aal5); err != nil {
			t.Error(err)
			return
		}
		if ack, err = h.drv.OpenRaw(th, ackVC, lc.aal5); err != nil {
			t.Error(err)
			return
		}
		opened = true
		h.kern.Wakeup(ready)
		var buf memory.Addr
		if wanda {
			buf, _ = pdu.AllocIPC(th)
		} else {
			buf = h.kern.Kmalloc(pduBytes)
		}
		fill := make([]byte, pduBytes)
		for i := range fill {
			fill[i] = byte(i * 7)
		}
		h.c.Write(buf, fill)
		abuf := h.kern.Kmalloc(48)
		for i := range total + 1 {
			if i == warm {
				st := h.dev.Stats()
				dmaTx0, dmaRx0 = st.DMAReadBusy, st.DMAWriteBusy
			}
			if i == total {
				// The last cycle ends where a next send would start.
				marks = append(marks, cur)
				endAt = h.c.LocalTime()
				return
			}
			if err := pdu.Send(th, buf, sendLen); err != nil {
				t.Error(err)
				return
			}
			if wanda {
				b, _, _ := ack.RecvIPC(th)
				ack.ReleaseIPC(th, b)
			} else if _, err := ack.Recv(th, abuf, 48); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var rxTotal int
	h.kern.Spawn("receiver", func(th *kernel.Thread) {
		for !opened {
			th.Sleep(ready)
		}
		ubuf := h.kern.Kmalloc(pduBytes)
		var ackBuf memory.Addr
		if wanda {
			ackBuf, _ = ack.AllocIPC(th)
		} else {
			ackBuf = h.kern.Kmalloc(48)
		}
		for range total {
			if wanda {
				b, n, _ := pdu.RecvIPC(th)
				rxTotal += n
				pdu.ReleaseIPC(th, b)
			} else {
				n, _ := pdu.Recv(th, ubuf, pduBytes)
				rxTotal += n
			}
			if err := ack.Send(th, ackBuf, ackLen); err != nil {
				t.Error(err)
				return
			}
		}
	})
	k.RunUntil(10 * sim.Second)
	h.c.Shutdown()
	if rxTotal != total*sendLen {
		t.Fatalf("%s %s: received %d bytes in %d PDUs' time, want %d", machine, dp.Personality, rxTotal, total, total*sendLen)
	}
	if len(marks) != total {
		t.Fatalf("measured %d cycles, want %d", len(marks), total)
	}
	var s stages
	for i := warm; i < total; i++ {
		mk := marks[i]
		next := endAt
		if i+1 < len(marks) {
			next = marks[i+1].a0
		}
		if mk.txN != pduCells || mk.rxN != pduCells {
			t.Fatalf("cycle %d: %d cells seen entering the transmit FIFO, %d leaving the receive FIFO", i, mk.txN, mk.rxN)
		}
		s.A += mk.a1 - mk.a0
		s.B += mk.b1 - mk.a1
		s.C += mk.c1 - mk.b1
		s.D += next - mk.c1
		s.Cycle += next - mk.a0
		s.T += mk.tx1 - mk.tx0
		s.R += mk.rx1 - mk.rx0
		s.Cycles++
	}
	div := sim.Time(s.Cycles)
	s.A, s.B, s.C, s.D, s.Cycle, s.T, s.R = s.A/div, s.B/div, s.C/div, s.D/div, s.Cycle/div, s.T/div, s.R/div
	st := h.dev.Stats()
	// Payload per measured cycle: the PDU, and the ACK's cell.
	measured := float64(n)
	if b := st.DMAReadBusy - dmaTx0; b > 0 {
		s.TxDMA = (pduBits + 384) * measured / b.Seconds() / 1e6
	}
	if b := st.DMAWriteBusy - dmaRx0; b > 0 {
		s.RxDMA = (pduBits + 384) * measured / b.Seconds() / 1e6
	}
	if !lc.allowGuest {
		h.noGuestErrors(t)
	}
	if ds := h.drv.Stats(); ds.RxSeqErrors+ds.RxBroken+ds.Overruns+ds.RxNoVC != 0 {
		t.Errorf("driver stats: %+v", ds)
	}
	return s, h
}

func (s stages) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "A send %v, B line %v, C receive %v, D ACK %v; cycle %v (%.0f/s); T %v, R %v, O %v", s.A, s.B, s.C, s.D, s.Cycle, s.cycleRate(), s.T, s.R, s.overhead())
	fmt.Fprintf(&b, "; tx %.1f Mbit/s, rx %.1f Mbit/s", s.txRate(), s.rxRate())
	if s.TxDMA > 0 {
		fmt.Fprintf(&b, "; DMA mem→FIFO %.1f Mbit/s", s.TxDMA)
	}
	if s.RxDMA > 0 {
		fmt.Fprintf(&b, "; DMA FIFO→mem %.1f Mbit/s", s.RxDMA)
	}
	return b.String()
}

// TestLoopbackCalibration runs the four machine × transfer cases and
// compares them with the seed's calibration figures (docs/reference/atm-taxi.md sec. 5):
// the PIO rates within 5%, the DMA transfer rates within 10%.
func TestLoopbackCalibration(t *testing.T) {
	type want struct{ tx, rx, txDMA, rxDMA float64 } // Mbit/s; 0: no target
	cases := []struct {
		name, machine string
		tx, rx        string
		want          want
	}{
		{"ultrix pio", "ds5000-200", atm.PIO, atm.PIO, want{tx: 28, rx: 16}},
		{"wanda pio", "ds5000-25", atm.PIO, atm.PIO, want{tx: 46, rx: 19}},
		{"ultrix dma", "ds5000-200", atm.DMAA, atm.DMAB, want{txDMA: 128}},
		{"wanda dma", "ds5000-25", atm.DMAB, atm.DMAB, want{txDMA: 125, rxDMA: 67}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dp := loadMachine(t, tc.machine).Driver
			dp.Tx, dp.Rx = tc.tx, tc.rx
			s, _ := runLoopback(t, loopCase{machine: tc.machine, dp: dp}, 3, 10)
			t.Logf("%s: %v", tc.name, s)
			check := func(what string, got, want, tol float64) {
				if want == 0 {
					return
				}
				if got < want*(1-tol) || got > want*(1+tol) {
					t.Errorf("%s: %.1f Mbit/s, the seed measured %.0f (%.0f%% allowed)", what, got, want, 100*tol)
				}
			}
			check("sustained transmit", s.txRate(), tc.want.tx, 0.05)
			check("sustained receive", s.rxRate(), tc.want.rx, 0.05)
			check("DMA memory → FIFO", s.TxDMA, tc.want.txDMA, 0.1)
			check("DMA FIFO → memory", s.RxDMA, tc.want.rxDMA, 0.1)
		})
	}
}
