// Package yesv2 is the Yes V2 loop-back test of the seed
// (docs/reference/atm-taxi.md sec. 5) as the workload "yesv2": on a host whose
// ATM card's transmitter is cabled to its own receiver, a sender process
// sends a PDU (70 cells) through a raw ATM socket, a receiver process
// takes it and answers with a one-cell ACK on another VC, repeated. Each
// case of the workload is one such host; the cases run side by side (each
// host has its own cable), and the table puts them in one row each.
// Layer APPL.
//
// The stages of one cycle (the seed's Figure 3) are the simulator's
// measurement, read through the core's hooks (the programs read no
// clock):
//
//	A  send:     the sender enters its send call → the PDU's last cell is
//	             in the transmit FIFO
//	B  line:     → the receive interrupt is taken
//	C  receive:  → the receiver's receive call returns (copy-out done)
//	D  ACK:      → the sender enters its next send (the ACK's way back)
//
// The sustained rates are derived from the loop-back intervals as the
// seed derives them (docs/reference/atm-taxi.md sec. 5): its intervals are what an
// oscilloscope shows on the board's signals, and the operating-system and
// user overhead — everything of the cycle that is not a cell crossing
// between host and FIFO — is allocated equally between the transmit and
// the receive path. Here the intervals are read from the board's FIFOs:
//
//	T  transmit: the PDU's first cell begins to enter the transmit FIFO
//	             (its first word written, or its DMA begun) → its last
//	             cell is complete in the FIFO
//	R  receive:  the PDU's first cell begins to leave the receive FIFO
//	             (its first word read, or its DMA begun) → its last cell
//	             is out (read, or its payload in memory)
//	O  overhead: the cycle less T and R (system calls, copies between
//	             user and kernel, interrupt entry, scheduling, the ACK)
//
// so that the sustained transmit rate is the PDU's cell payload over
// T + O/2 and the sustained receive rate over R + O/2 (each as if the
// other path's share of the overhead were the only other work), and the
// cycle rate is one over the cycle. The DMA transfer rates are the
// payload of the PDU and its ACK over the board's DMA busy time in that
// direction, per cycle (the card's DMABusy: dma_latency and transfer, as
// the board runs them), shown only for cases that use DMA that way. A case
// may carry the seed's published figures for its kernel and paths
// (published), which the report sets beside the simulated ones with the
// source.
//
// Simplifications: the kernel personality, transfer paths and assists are
// the host's driver settings (machine file and [host.atm.driver]); the
// programs are the measuring loop and nothing else; a case whose PDUs do
// not all arrive is reported incomplete rather than retried.
package yesv2

import (
	"fmt"
	"strings"

	"simkron/card"
	"simkron/cpu"
	"simkron/memory"
	"simkron/report/shape"
	"simkron/sim"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/kernel"
	"simkron/trace"
	"simkron/workload"
)

// Params configure the loop-back test.
type Params struct {
	PDUCells int    `toml:"pdu_cells" min:"1" max:"128" help:"cells of the test PDU (the seed: 70); at most the driver's raw_max_cells"`
	Cycles   int    `toml:"cycles" min:"1" max:"100000" help:"measured PDU/ACK cycles per case"`
	Warmup   int    `toml:"warmup" min:"0" max:"1000" help:"cycles before measuring (the first fills the caches)"`
	PDUVCI   int    `toml:"pdu_vci" min:"32" max:"65535" help:"VCI (VPI 0) of the PDUs"`
	ACKVCI   int    `toml:"ack_vci" min:"32" max:"65535" help:"VCI (VPI 0) of the ACKs"`
	Cases    []Case `toml:"case" nonempty:"true" help:"the cases, one a host cabled to itself, each a row of the table"`
	// Source names where the cases' published figures come from.
	Source string `toml:"source" help:"where the cases' published figures come from, for the report"`
}

// Case is one row: a host and the SAR its sockets use.
type Case struct {
	Name string `toml:"name" help:"row label"`
	Host string `toml:"host" help:"host whose ATM card is on a loop-back cable"`
	AAL5 bool   `toml:"aal5" help:"AAL5 sockets (pad, trailer, CRC-32 in software or by the board's assist) instead of the seed's MSNL-like SAR; the PDU is then pdu_cells cells of AAL5 PDU and the ACK one"`
	// Published holds figures a study published for this case (0: none).
	Published Published `toml:"published" help:"the figures a study published for this case, set beside the simulated ones in the report (0: none published)"`
}

// Published are a case's published figures, Mbit/s of cell payload.
type Published struct {
	Tx    float64 `toml:"tx" min:"0" help:"sustained transmit rate"`
	Rx    float64 `toml:"rx" min:"0" help:"sustained receive rate"`
	DMATx float64 `toml:"dma_tx" min:"0" help:"DMA transfer rate, memory to transmit FIFO"`
	DMARx float64 `toml:"dma_rx" min:"0" help:"DMA transfer rate, receive FIFO to memory"`
}

// any reports whether any figure is published.
func (p Published) any() bool { return p.Tx+p.Rx+p.DMATx+p.DMARx > 0 }

// DefaultParams returns the seed's test: a 70-cell PDU, one-cell ACKs.
func DefaultParams() Params {
	return Params{PDUCells: 70, Cycles: 10, Warmup: 3, PDUVCI: 100, ACKVCI: 101}
}

// Validate checks what the bounds cannot.
func (p Params) Validate() error {
	if p.PDUVCI == p.ACKVCI {
		return fmt.Errorf("ack_vci: %d is pdu_vci too: the PDUs and ACKs need VCs of their own", p.ACKVCI)
	}
	seen := map[string]bool{}
	for i, c := range p.Cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("case.%d.name: a case needs a name", i)
		case c.Host == "":
			return fmt.Errorf("case.%d.host: a case needs a host", i)
		case seen[c.Host]:
			return fmt.Errorf("case.%d.host: host %q runs another case already (a host has one loop-back cable)", i, c.Host)
		}
		seen[c.Host] = true
	}
	return nil
}

// Endpoint is an ATM host as the ATM workloads find it.
type Endpoint struct {
	Name   string
	Kernel *kernel.Kernel
	Driver *atm.Driver
	// Card is the board's DMA meter: its DMA busy time in each direction
	// (memory to interface, interface to memory).
	Card card.DMAMeter
	// Received, when the card offers it (card.Card), is the trace source
	// of the first cell of each PDU reaching the card; nil otherwise.
	Received *trace.Source[[]byte]
	// FIFO, when the card offers it (card.FIFO), is the trace source of
	// the cells crossing between host and FIFOs; nil otherwise.
	FIFO *trace.Source[card.FIFOCell]
}

// FindHost returns the host called name with its first ATM card; role
// is the key that named it, for errors.
func FindHost(env workload.Env, role, name string) (*Endpoint, error) {
	wh, err := env.Host(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	k, _ := workload.Find[*kernel.Kernel](wh)
	drv, ok := workload.Find[*atm.Driver](wh)
	meter, ok2 := workload.Find[card.DMAMeter](wh)
	if k == nil || !ok || !ok2 {
		return nil, fmt.Errorf("%s: host %q has no ATM card", role, name)
	}
	h := &Endpoint{Name: name, Kernel: k, Driver: drv, Card: meter}
	if o, ok := meter.(card.Card); ok {
		h.Received = o.Received()
	}
	if o, ok := meter.(card.FIFO); ok {
		h.FIFO = o.FIFO()
	}
	return h, nil
}

func init() {
	workload.Register(workload.Type{
		Name:   "yesv2",
		Help:   "the Yes V2 loop-back PDU/ACK test: stage durations of one cycle, sustained transmit and receive rates, cycle rate and DMA rates, a row per host",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			var out []workload.HostRef
			for i, c := range params.(*Params).Cases {
				out = append(out, workload.HostRef{Key: fmt.Sprintf("case[%d].host", i), Name: c.Host})
			}
			return out
		},
		New: func(env workload.Env, params any) (workload.Workload, error) { return New(env, *params.(*Params)) },
	})
}

// Test is the prepared workload: a run per case.
type Test struct {
	p    Params
	runs []*run
}

// New prepares every case on its host.
func New(env workload.Env, p Params) (*Test, error) {
	if len(p.Cases) == 0 {
		return nil, fmt.Errorf("no [[workload.yesv2.case]]: name at least one host cabled to itself")
	}
	t := &Test{p: p}
	for i, c := range p.Cases {
		h, err := FindHost(env, fmt.Sprintf("case[%d].host", i), c.Host)
		if err != nil {
			return nil, err
		}
		if max := h.Driver.Params().RawMaxCells; p.PDUCells > max {
			return nil, fmt.Errorf("pdu_cells: %d is more than host %q's driver takes on a raw socket (raw_max_cells %d)", p.PDUCells, c.Host, max)
		}
		t.runs = append(t.runs, newRun(p, c, h))
	}
	return t, nil
}

// mark holds the stage boundaries of one cycle, in the host's time, and
// the FIFO intervals of its PDU (zero until the first cell crossed).
type mark struct {
	a0, a1, b1, c1   sim.Time
	txBegin, txEnd   sim.Time
	rxBegin, rxEnd   sim.Time
	txCells, rxCells int
}

// Stage phases of a cycle.
const (
	beforeSend = iota // waiting for the sender's send call
	inSend            // A: the PDU going into the FIFO
	onLine            // B: waiting for the receive interrupt
	inReceive         // C: until the receiver's call returns
)

// run is one case on its host.
type run struct {
	p     Params
	c     Case
	h     *Endpoint
	cpu   *cpu.CPU
	irq   int
	aal5  bool
	wanda bool
	// The measurement.
	sender, receiver *kernel.Thread
	marks            []mark
	cur              mark
	started          bool
	phase            int
	endAt            sim.Time
	dma0             [2]sim.Time
	dma1             [2]sim.Time
	rxBytes          int
	failed           string
}

func newRun(p Params, c Case, h *Endpoint) *run {
	r := &run{p: p, c: c, h: h, cpu: h.Kernel.CPU(), irq: h.Driver.IRQ(), aal5: c.AAL5,
		wanda: h.Driver.Params().Personality == atm.Wanda}
	r.cpu.Trace.Enter.Connect(func(s *cpu.Symbol) { r.enter(r.cpu, s) })
	r.cpu.Trace.Exit.Connect(func(s *cpu.Symbol) { r.exit(r.cpu, s) })
	if h.FIFO != nil {
		h.FIFO.Connect(func(f card.FIFOCell) { r.fifo(f.Tx, f.VCI, f.Begin, f.End) })
	}
	r.cpu.Trace.Interrupt.Connect(func(ev cpu.Interrupt) { r.interrupt(r.cpu, ev.Line, ev.Entry) })
	return r
}

func (r *run) thread(c *cpu.CPU) any { return c.Current().Data }

func (r *run) enter(c *cpu.CPU, s *cpu.Symbol) {
	if r.phase == beforeSend && r.sender != nil && s.Name == "sys_atm_send" && r.thread(c) == r.sender {
		if r.started {
			r.marks = append(r.marks, r.cur)
		}
		r.cur, r.started = mark{a0: c.LocalTime()}, true
		r.phase = inSend
	}
}

func (r *run) exit(c *cpu.CPU, s *cpu.Symbol) {
	switch {
	case r.phase == inSend && s.Name == "yes_output" && r.thread(c) == r.sender:
		r.cur.a1 = c.LocalTime()
		r.phase = onLine
	case r.phase == inReceive && s.Name == "sys_atm_recv" && r.thread(c) == r.receiver:
		r.cur.c1 = c.LocalTime()
		r.phase = beforeSend
	}
}

func (r *run) interrupt(c *cpu.CPU, line int, entry bool) {
	if entry && line == r.irq && r.phase == onLine {
		r.cur.b1 = c.LocalTime()
		r.phase = inReceive
	}
}

// fifo notes a cell of the cycle's PDU crossing between host and FIFO.
func (r *run) fifo(tx bool, vci uint16, begin, end sim.Time) {
	if !r.started || int(vci) != r.p.PDUVCI {
		return
	}
	m := &r.cur
	if tx {
		if m.txCells == 0 || begin < m.txBegin {
			m.txBegin = begin
		}
		m.txEnd = max(m.txEnd, end)
		m.txCells++
		return
	}
	if m.rxCells == 0 || begin < m.rxBegin {
		m.rxBegin = begin
	}
	m.rxEnd = max(m.rxEnd, end)
	m.rxCells++
}

func (r *run) fail(format string, args ...any) {
	if r.failed == "" {
		r.failed = fmt.Sprintf(format, args...)
	}
}

// sizes returns the PDU's and the ACK's lengths on the sockets: whole
// cells for the MSNL-like SAR, the AAL5 SDUs that fill them otherwise.
func (r *run) sizes() (pdu, ack int) {
	if r.aal5 {
		return r.p.PDUCells*48 - 8, 40
	}
	return r.p.PDUCells * 48, 48
}

// Start implements workload.Workload.
func (t *Test) Start() {
	for _, r := range t.runs {
		r.start()
	}
}

func (r *run) start() {
	k := r.h.Kernel
	drv := r.h.Driver
	var pdu, ack *atm.RawSocket
	opened := false
	ready := &kernel.WaitQueue{}
	sendLen, ackLen := r.sizes()
	total := r.p.Warmup + r.p.Cycles
	r.sender = k.Spawn("yesv2-sender", func(th *kernel.Thread) {
		var err error
		if pdu, err = drv.OpenRaw(th, atm.VC{VCI: uint16(r.p.PDUVCI)}, r.aal5); err != nil {
			r.fail("open VC %d: %v", r.p.PDUVCI, err)
			return
		}
		if ack, err = drv.OpenRaw(th, atm.VC{VCI: uint16(r.p.ACKVCI)}, r.aal5); err != nil {
			r.fail("open VC %d: %v", r.p.ACKVCI, err)
			return
		}
		opened = true
		k.Wakeup(ready)
		var buf memory.Addr
		if r.wanda {
			buf, err = pdu.AllocIPC(th)
		} else if buf = k.Kmalloc(sendLen); buf == 0 {
			err = atm.ErrNoBuffer
		}
		abuf := k.Kmalloc(48)
		if err != nil || abuf == 0 {
			r.fail("sender's buffers: %v", err)
			return
		}
		fill := make([]byte, sendLen)
		for i := range fill {
			fill[i] = byte(i * 7)
		}
		r.cpu.Write(buf, fill)
		for i := range total + 1 {
			if i == r.p.Warmup {
				r.dma0[0], r.dma0[1] = r.h.Card.DMABusy()
			}
			if i == total {
				// The last cycle ends where a next send would start.
				r.dma1[0], r.dma1[1] = r.h.Card.DMABusy()
				r.marks = append(r.marks, r.cur)
				r.endAt = r.cpu.LocalTime()
				return
			}
			if err := pdu.Send(th, buf, sendLen); err != nil {
				r.fail("send: %v", err)
				return
			}
			if r.wanda {
				b, _, err := ack.RecvIPC(th)
				if err != nil {
					r.fail("ACK: %v", err)
					return
				}
				ack.ReleaseIPC(th, b)
			} else if _, err := ack.Recv(th, abuf, 48); err != nil {
				r.fail("ACK: %v", err)
				return
			}
		}
	})
	r.receiver = k.Spawn("yesv2-receiver", func(th *kernel.Thread) {
		for !opened {
			if r.failed != "" {
				return
			}
			th.Sleep(ready)
		}
		ubuf := k.Kmalloc(sendLen)
		var ackBuf memory.Addr
		var err error
		if r.wanda {
			ackBuf, err = ack.AllocIPC(th)
		} else {
			ackBuf = k.Kmalloc(48)
		}
		if err != nil || ubuf == 0 || ackBuf == 0 {
			r.fail("receiver's buffers: %v", err)
			return
		}
		for range total {
			var n int
			if r.wanda {
				var b memory.Addr
				if b, n, err = pdu.RecvIPC(th); err == nil {
					pdu.ReleaseIPC(th, b)
				}
			} else {
				n, err = pdu.Recv(th, ubuf, sendLen)
			}
			if err != nil {
				r.fail("receive: %v", err)
				return
			}
			r.rxBytes += n
			if err := ack.Send(th, ackBuf, ackLen); err != nil {
				r.fail("ACK send: %v", err)
				return
			}
		}
	})
}

// Row is one case's result. Times are microseconds, rates Mbit/s of cell
// payload (48 bytes a cell); a DMA rate is 0 where that direction used no
// DMA.
type Row struct {
	Case        string  `json:"case"`
	Host        string  `json:"host"`
	Kernel      string  `json:"kernel"`
	Tx          string  `json:"tx"`
	Rx          string  `json:"rx"`
	RxInterrupt string  `json:"rx_interrupt"`
	Assists     string  `json:"assists"`
	SAR         string  `json:"sar"`
	PDUCells    int     `json:"pdu_cells"`
	Cycles      int     `json:"cycles"`
	SendUS      float64 `json:"send_us"`
	LineUS      float64 `json:"line_us"`
	ReceiveUS   float64 `json:"receive_us"`
	AckUS       float64 `json:"ack_us"`
	CycleUS     float64 `json:"cycle_us"`
	CycleRate   float64 `json:"cycles_per_s"`
	// The FIFO intervals and the overhead the sustained rates are derived
	// from (microseconds a cycle), and those rates.
	TxFIFOUS   float64 `json:"tx_fifo_us"`
	RxFIFOUS   float64 `json:"rx_fifo_us"`
	OverheadUS float64 `json:"overhead_us"`
	TxMbps     float64 `json:"tx_mbps"`
	RxMbps     float64 `json:"rx_mbps"`
	DMATxMbps  float64 `json:"dma_mem_to_fifo_mbps"`
	DMARxMbps  float64 `json:"dma_fifo_to_mem_mbps"`
	// Drops the driver counted (none in a clean run).
	SeqErrors uint64 `json:"seq_errors"`
	Overruns  uint64 `json:"overruns"`
	BadCRC    uint64 `json:"bad_crc"`
}

func (r *run) row() (Row, string) {
	dp := r.h.Driver.Params()
	var assists []string
	if dp.HeaderInsertion {
		assists = append(assists, "header insertion")
	}
	if dp.CRCAssist {
		assists = append(assists, "AAL5 CRC")
	}
	if dp.Rx == atm.Sort {
		assists = append(assists, "VCI sort")
	}
	sar := "msnl"
	if r.aal5 {
		sar = "aal5"
	}
	ds := r.h.Driver.Stats()
	row := Row{Case: r.c.Name, Host: r.c.Host, Kernel: dp.Personality, Tx: dp.Tx, Rx: dp.Rx, RxInterrupt: dp.RxInterrupt,
		Assists: strings.Join(assists, ", "), SAR: sar, PDUCells: r.p.PDUCells,
		SeqErrors: ds.RxSeqErrors, Overruns: ds.Overruns, BadCRC: ds.RxBadCRC}
	if row.Assists == "" {
		row.Assists = "none"
	}
	total := r.p.Warmup + r.p.Cycles
	sendLen, _ := r.sizes()
	switch {
	case r.failed != "":
		return row, r.failed
	case r.rxBytes != total*sendLen:
		return row, fmt.Sprintf("received %d bytes of the %d in %d PDUs", r.rxBytes, total*sendLen, total)
	case len(r.marks) != total:
		return row, fmt.Sprintf("measured %d cycles of %d", len(r.marks), total)
	}
	var a, b, c, d, cyc, tx, rx sim.Time
	for i := r.p.Warmup; i < total; i++ {
		mk := r.marks[i]
		next := r.endAt
		if i+1 < len(r.marks) {
			next = r.marks[i+1].a0
		}
		if mk.txCells != r.p.PDUCells || mk.rxCells != r.p.PDUCells {
			return row, fmt.Sprintf("cycle %d: %d cells seen entering the transmit FIFO and %d leaving the receive FIFO, want %d", i, mk.txCells, mk.rxCells, r.p.PDUCells)
		}
		a += mk.a1 - mk.a0
		b += mk.b1 - mk.a1
		c += mk.c1 - mk.b1
		d += next - mk.c1
		cyc += next - mk.a0
		tx += mk.txEnd - mk.txBegin
		rx += mk.rxEnd - mk.rxBegin
	}
	n := float64(r.p.Cycles)
	us := func(t sim.Time) float64 { return t.Seconds() * 1e6 / n }
	row.Cycles = r.p.Cycles
	row.SendUS, row.LineUS, row.ReceiveUS, row.AckUS, row.CycleUS = us(a), us(b), us(c), us(d), us(cyc)
	row.TxFIFOUS, row.RxFIFOUS = us(tx), us(rx)
	row.OverheadUS = max(0, row.CycleUS-row.TxFIFOUS-row.RxFIFOUS)
	bits := float64(r.p.PDUCells * 48 * 8)
	row.TxMbps = bits / (row.TxFIFOUS + row.OverheadUS/2)
	row.RxMbps = bits / (row.RxFIFOUS + row.OverheadUS/2)
	row.CycleRate = 1e6 / row.CycleUS
	// The PDU and its ACK's cell cross the DMA paths each cycle.
	cycleBits := bits + 48*8
	if busy := r.dma1[0] - r.dma0[0]; busy > 0 {
		row.DMATxMbps = cycleBits * n / busy.Seconds() / 1e6
	}
	if busy := r.dma1[1] - r.dma0[1]; busy > 0 {
		row.DMARxMbps = cycleBits * n / busy.Seconds() / 1e6
	}
	return row, ""
}

// Result implements workload.Workload: the rows, the table of intervals
// and rates, and the published figures beside the simulated ones.
func (t *Test) Result() (workload.Result, error) {
	var res workload.Result
	var rows []Row
	tab := shape.Table{
		Title: fmt.Sprintf("Yes V2 loop-back test: a %d-cell PDU and a one-cell ACK per cycle (mean of %d cycles; stages A send, B line, C receive, D ACK; T and R the PDU's cells crossing into the transmit FIFO and out of the receive FIFO, O the rest of the cycle: the OS and user overhead; sustained rates in Mbit/s of cell payload, tx = PDU / (T + O/2), rx = PDU / (R + O/2), as the seed derives them; DMA rates over the board's DMA busy time)", t.p.PDUCells, t.p.Cycles),
		Columns: []shape.Column{
			{Name: "case"}, {Name: "kernel", Doc: "the host's kernel: Ultrix or Wanda"},
			{Name: "tx", Doc: "how the PDU's cells go to the board: pio (programmed I/O) or a DMA mode"},
			{Name: "rx", Doc: "how cells come off the board: pio, a DMA mode or the VCI sorter"},
			{Name: "assists", Doc: "the board's hardware assists switched on"},
			{Name: "A", Unit: "us", Doc: "stage A, send: from the sender's send call to the PDU's last cell in the transmit FIFO"},
			{Name: "B", Unit: "us", Doc: "stage B, line: from there to the receive interrupt taken"},
			{Name: "C", Unit: "us", Doc: "stage C, receive: from there to the receiver's receive call returning (copy-out done)"},
			{Name: "D", Unit: "us", Doc: "stage D, ACK: from there to the sender's next send call (the one-cell ACK's way back)"},
			{Name: "cycle", Unit: "us", Doc: "one loop-back cycle, a PDU out and its ACK back: A + B + C + D"},
			{Name: "T", Unit: "us", Doc: "transmit: from the PDU's first cell beginning to enter the transmit FIFO to its last cell complete there"},
			{Name: "R", Unit: "us", Doc: "receive: from the PDU's first cell beginning to leave the receive FIFO to its last cell out"},
			{Name: "O", Unit: "us", Doc: "the rest of the cycle, the OS and user overhead: cycle - T - R"},
			{Name: "loop-back rate", Unit: "cycles/s", Doc: "loop-back cycles (a PDU and its ACK) completed per second of simulated time: 1 / cycle; not processor cycles"},
			{Name: "tx", Unit: "Mbit/s", Doc: "sustained transmit rate of cell payload: PDU / (T + O/2)"},
			{Name: "rx", Unit: "Mbit/s", Doc: "sustained receive rate of cell payload: PDU / (R + O/2)"},
			{Name: "DMA mem->FIFO", Unit: "Mbit/s", Doc: "the board's DMA rate from memory to the transmit FIFO over its DMA busy time (\"-\": no DMA that way)"},
			{Name: "DMA FIFO->mem", Unit: "Mbit/s", Doc: "the board's DMA rate from the receive FIFO to memory over its DMA busy time (\"-\": no DMA that way)"},
		},
	}
	pub := shape.Table{
		Title: "Yes V2: the published figures beside the simulated ones (Mbit/s of cell payload; published: " + t.p.Source + ")",
		Columns: []shape.Column{{Name: "case"}, {Name: "tx"}, {Name: "published", Doc: "each \"published\" column: the paper's figure for the column before it (\"-\": none published)"},
			{Name: "rx"}, {Name: "published"}, {Name: "DMA mem->FIFO"}, {Name: "published"}, {Name: "DMA FIFO->mem"}, {Name: "published"}},
	}
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	dma := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return f1(v)
	}
	for _, r := range t.runs {
		row, bad := r.row()
		rows = append(rows, row)
		if bad != "" {
			if res.Incomplete == "" {
				res.Incomplete = fmt.Sprintf("yesv2 case %q: %s", r.c.Name, bad)
			}
			out := []string{row.Case, row.Kernel, row.Tx, row.Rx, row.Assists}
			for len(out) < len(tab.Columns) {
				out = append(out, "-")
			}
			tab.Rows = append(tab.Rows, out)
			continue
		}
		tab.Rows = append(tab.Rows, []string{row.Case, row.Kernel, row.Tx, row.Rx, row.Assists,
			f1(row.SendUS), f1(row.LineUS), f1(row.ReceiveUS), f1(row.AckUS), f1(row.CycleUS),
			f1(row.TxFIFOUS), f1(row.RxFIFOUS), f1(row.OverheadUS), fmt.Sprintf("%.0f", row.CycleRate),
			f1(row.TxMbps), f1(row.RxMbps), dma(row.DMATxMbps), dma(row.DMARxMbps)})
		if p := r.c.Published; p.any() {
			pub.Rows = append(pub.Rows, []string{row.Case, f1(row.TxMbps), dma(p.Tx), f1(row.RxMbps), dma(p.Rx),
				dma(row.DMATxMbps), dma(p.DMATx), dma(row.DMARxMbps), dma(p.DMARx)})
		}
	}
	res.Sections = []workload.Section{{Name: "yesv2", Value: rows}}
	res.Figures = shape.Figures{Tables: []shape.Table{tab}}
	if len(pub.Rows) > 0 {
		res.Figures.Tables = append(res.Figures.Tables, pub)
	}
	return res, nil
}
