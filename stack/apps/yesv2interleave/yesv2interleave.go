// Package yesv2interleave is the variant of the Yes V2 test the seed's
// VCI-sorting proposal needs (docs/reference/atm-taxi.md sec. 6.4), as
// the workload "yesv2-interleave" (a Go name has no hyphen): several
// senders, each on its own link
// into an ATM switch, send an AAL5 PDU at the same instant to one
// receiver, whose link then carries their cells interleaved; the receiver
// takes each on a raw socket of its own VC. The receive time of a round
// runs from the arrival of the round's first cell at the receiver's card
// to the return of the receive call that delivers the round's last PDU;
// the receive rate is the round's cell payload over it. With the
// header-flag interrupt the receiver finds cells of other, incomplete
// PDUs in its FIFO and reassembles them all in software; with the board's
// VCI sorter the cells go by DMA straight into each VC's buffer. Cases
// run one after another, each over its own VCs, so that the same senders
// can feed several receivers with different receive paths. Layer APPL.
//
// Simplifications: every sender sends the same number of cells a round
// (pdu_cells split evenly); rounds start on a fixed period, long enough
// for a round to end before the next; the measurement is the simulator's
// (an observer on the receiver's card and the receive calls' return
// times), never the programs'.
package yesv2interleave

import (
	"fmt"
	"slices"

	"simkron/memory"
	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/apps/yesv2"
	atm "simkron/stack/driver/atmtaxi"
	"simkron/stack/kernel"
	"simkron/workload"
)

// Params configure the test.
type Params struct {
	PDUCells int      `toml:"pdu_cells" min:"2" max:"1365" help:"cells arriving at the receiver each round, split evenly among the senders (the seed's 70)"`
	Rounds   int      `toml:"rounds" min:"1" max:"10000" help:"measured rounds per case"`
	Warmup   int      `toml:"warmup" min:"0" max:"100" help:"rounds per case before measuring (the first fills the caches)"`
	Period   sim.Time `toml:"period" min:"1ms" max:"10s" help:"time from one round's start to the next's: longer than a round takes"`
	Cases    []Case   `toml:"case" nonempty:"true" help:"the cases, run one after another, each a row of the table"`
}

// Case is one receiver fed by senders.
type Case struct {
	Name     string   `toml:"name" help:"row label"`
	Receiver string   `toml:"receiver" help:"host that receives the PDUs"`
	Senders  []string `toml:"senders" nonempty:"true" help:"hosts that send a PDU each round, at the same instant"`
	SendVCI  int      `toml:"send_vci" min:"32" max:"65535" help:"VCI (VPI 0) the senders send on; the switch routes it from each sender's port to the receiver"`
	RecvVCIs []int    `toml:"recv_vcis" min:"32" max:"65535" help:"VCI (VPI 0) at the receiver of each sender's PDUs, in the order of senders"`
}

// DefaultParams returns the seed's 70 cells a round, every 20 ms.
func DefaultParams() Params {
	return Params{PDUCells: 70, Rounds: 6, Warmup: 1, Period: 20 * sim.Millisecond}
}

// hostVC is a VC a host opens.
type hostVC struct {
	host string
	vci  int
}

// Validate checks what the bounds cannot.
func (p Params) Validate() error {
	used := map[hostVC]int{} // -> the case that opens it
	for i, c := range p.Cases {
		switch {
		case c.Name == "":
			return fmt.Errorf("case.%d.name: a case needs a name", i)
		case len(c.Senders) == 0:
			return fmt.Errorf("case.%d.senders: a case needs senders", i)
		case len(c.RecvVCIs) != len(c.Senders):
			return fmt.Errorf("case.%d.recv_vcis: %d VCIs for %d senders: one each", i, len(c.RecvVCIs), len(c.Senders))
		case p.PDUCells/len(c.Senders) < 1:
			return fmt.Errorf("case.%d.senders: %d senders cannot share %d cells", i, len(c.Senders), p.PDUCells)
		case slices.Contains(c.Senders, c.Receiver):
			return fmt.Errorf("case.%d.senders: the receiver %q cannot send too", i, c.Receiver)
		}
		for j, s := range c.Senders {
			if slices.Contains(c.Senders[:j], s) {
				return fmt.Errorf("case.%d.senders: %q is named twice", i, s)
			}
		}
		var vcs []hostVC
		for _, s := range c.Senders {
			vcs = append(vcs, hostVC{s, c.SendVCI})
		}
		for _, v := range c.RecvVCIs {
			vcs = append(vcs, hostVC{c.Receiver, v})
		}
		for _, v := range vcs {
			if prev, dup := used[v]; dup {
				return fmt.Errorf("case.%d: host %q opens VCI %d already (case[%d]): give each case VCs of its own", i, v.host, v.vci, prev)
			}
			used[v] = i
		}
	}
	return nil
}

func init() {
	workload.Register(workload.Type{
		Name:   "yesv2-interleave",
		Help:   "several senders' AAL5 PDUs interleaved through an ATM switch into one receiver: its receive rate with software reassembly or the VCI sorter",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			var out []workload.HostRef
			for i, c := range params.(*Params).Cases {
				out = append(out, workload.HostRef{Key: fmt.Sprintf("case[%d].receiver", i), Name: c.Receiver})
				for j, s := range c.Senders {
					out = append(out, workload.HostRef{Key: fmt.Sprintf("case[%d].senders[%d]", i, j), Name: s})
				}
			}
			return out
		},
		New: func(env workload.Env, params any) (workload.Workload, error) { return New(env, *params.(*Params)) },
	})
}

// Test is the prepared workload.
type Test struct {
	p     Params
	k     *sim.Scheduler
	cases []*run
	// base is the start of the first period: the first period boundary
	// at or after Start.
	base sim.Time
}

// run is one case.
type run struct {
	t      *Test
	c      Case
	index  int
	rx     *yesv2.Endpoint
	tx     []*yesv2.Endpoint
	cells  int // per sender
	first  []sim.Time
	done   []sim.Time
	got    int
	bad    int // PDUs whose bytes differ
	failed string
}

// New prepares the cases.
func New(env workload.Env, p Params) (*Test, error) {
	if len(p.Cases) == 0 {
		return nil, fmt.Errorf("no [[workload.yesv2-interleave.case]]: name a receiver and its senders")
	}
	t := &Test{p: p, k: env.Scheduler()}
	observed := map[string]*run{}
	for i, c := range p.Cases {
		r := &run{t: t, c: c, index: i, cells: p.PDUCells / len(c.Senders)}
		var err error
		if r.rx, err = yesv2.FindHost(env, fmt.Sprintf("case[%d].receiver", i), c.Receiver); err != nil {
			return nil, err
		}
		if r.rx.Received == nil {
			return nil, fmt.Errorf("case[%d].receiver: host %q's ATM card cannot be observed", i, c.Receiver)
		}
		for j, s := range c.Senders {
			h, err := yesv2.FindHost(env, fmt.Sprintf("case[%d].senders[%d]", i, j), s)
			if err != nil {
				return nil, err
			}
			if max := h.Driver.Params().RawMaxCells; r.cells > max {
				return nil, fmt.Errorf("pdu_cells: %d cells a sender is more than host %q's raw_max_cells (%d)", r.cells, s, max)
			}
			r.tx = append(r.tx, h)
		}
		// One observer per receiving card, for every case it serves.
		if prev := observed[c.Receiver]; prev == nil {
			r.rx.Received.Connect(func([]byte) { t.firstCell(c.Receiver) })
		}
		observed[c.Receiver] = r
		t.cases = append(t.cases, r)
	}
	return t, nil
}

// roundsPer is the rounds of one case.
func (t *Test) roundsPer() int { return t.p.Warmup + t.p.Rounds }

// slot returns the case and round whose period holds now (round -1: the
// gap before a case's first round).
func (t *Test) slot(now sim.Time) (int, int) {
	if now < t.base {
		return -1, -1
	}
	g := int((now - t.base) / t.p.Period) // period g starts global round g-1
	per := t.roundsPer() + 1
	ci, j := (g-1)/per, (g-1)%per
	if g < 1 || ci >= len(t.cases) || j >= t.roundsPer() {
		return -1, -1
	}
	return ci, j
}

// roundStart is when round j of case ci starts.
func (t *Test) roundStart(ci, j int) sim.Time {
	return t.base + sim.Time(1+ci*(t.roundsPer()+1)+j)*t.p.Period
}

// firstCell notes the first cell of a round at the receiver.
func (t *Test) firstCell(receiver string) {
	now := t.k.Now()
	ci, j := t.slot(now)
	if ci < 0 || t.cases[ci].c.Receiver != receiver {
		return
	}
	if r := t.cases[ci]; at(&r.first, j) == 0 {
		r.first[j] = now
	}
}

// at returns round j's time in xs, growing xs to hold it: the rounds'
// times are kept as rounds are observed.
func at(xs *[]sim.Time, j int) sim.Time {
	for len(*xs) <= j {
		*xs = append(*xs, 0)
	}
	return (*xs)[j]
}

// pattern is the byte at i of sender s's PDU.
func pattern(s, i int) byte { return byte(i*131 + s*29 + i>>7) }

// Start implements workload.Workload.
func (t *Test) Start() {
	now := t.k.Now()
	t.base = (now + t.p.Period - 1) / t.p.Period * t.p.Period
	for _, r := range t.cases {
		r.start()
	}
}

func (r *run) fail(format string, args ...any) {
	if r.failed == "" {
		r.failed = fmt.Sprintf(format, args...)
	}
}

func (r *run) start() {
	t := r.t
	sdu := r.cells*48 - 8
	rounds := t.roundsPer()
	for i, h := range r.tx {
		h.Kernel.Spawn(fmt.Sprintf("interleave%d-send", r.index), func(th *kernel.Thread) {
			sock, err := h.Driver.OpenRaw(th, atm.VC{VCI: uint16(r.c.SendVCI)}, true)
			if err != nil {
				r.fail("%s: open VC %d: %v", h.Name, r.c.SendVCI, err)
				return
			}
			var buf memory.Addr
			if h.Driver.Params().Personality == atm.Wanda {
				buf, err = sock.AllocIPC(th)
			} else if buf = h.Kernel.Kmalloc(sdu); buf == 0 {
				err = atm.ErrNoBuffer
			}
			if err != nil {
				r.fail("%s: buffer: %v", h.Name, err)
				return
			}
			p := make([]byte, sdu)
			for j := range p {
				p[j] = pattern(i, j)
			}
			h.Kernel.CPU().Write(buf, p)
			for j := range rounds {
				th.SleepFor(t.roundStart(r.index, j) - t.k.Now())
				if err := sock.Send(th, buf, sdu); err != nil {
					r.fail("%s: send: %v", h.Name, err)
					return
				}
			}
		})
	}
	rx := r.rx
	for i, vci := range r.c.RecvVCIs {
		rx.Kernel.Spawn(fmt.Sprintf("interleave%d-recv%d", r.index, i), func(th *kernel.Thread) {
			sock, err := rx.Driver.OpenRaw(th, atm.VC{VCI: uint16(vci)}, true)
			if err != nil {
				r.fail("%s: open VC %d: %v", rx.Name, vci, err)
				return
			}
			wanda := rx.Driver.Params().Personality == atm.Wanda
			ubuf := rx.Kernel.Kmalloc(sdu)
			want := make([]byte, sdu)
			for j := range want {
				want[j] = pattern(i, j)
			}
			got := make([]byte, sdu)
			for j := range rounds {
				var b memory.Addr
				var n int
				if wanda {
					b, n, err = sock.RecvIPC(th)
				} else {
					b = ubuf
					n, err = sock.Recv(th, ubuf, sdu)
				}
				if err != nil {
					r.fail("%s: receive: %v", rx.Name, err)
					return
				}
				r.done[j] = max(at(&r.done, j), rx.Kernel.CPU().LocalTime())
				rx.Kernel.CPU().System().Phys.Read(b, got[:min(n, sdu)])
				if n != sdu || string(got) != string(want) {
					r.bad++
				}
				r.got++
				if wanda {
					sock.ReleaseIPC(th, b)
				}
			}
		})
	}
}

// Row is one case's result: receive time in microseconds, rate in Mbit/s
// of cell payload.
type Row struct {
	Case        string  `json:"case"`
	Receiver    string  `json:"receiver"`
	Rx          string  `json:"rx"`
	RxInterrupt string  `json:"rx_interrupt"`
	CRCAssist   bool    `json:"crc_assist"`
	Senders     int     `json:"senders"`
	Cells       int     `json:"cells"`
	Rounds      int     `json:"rounds"`
	ReceiveUS   float64 `json:"receive_us"`
	RxMbps      float64 `json:"rx_mbps"`
	PDUs        int     `json:"pdus"`
	Corrupt     int     `json:"corrupt"`
}

func (r *run) row() (Row, string) {
	dp := r.rx.Driver.Params()
	row := Row{Case: r.c.Name, Receiver: r.c.Receiver, Rx: dp.Rx, RxInterrupt: dp.RxInterrupt, CRCAssist: dp.CRCAssist,
		Senders: len(r.c.Senders), Cells: r.cells * len(r.c.Senders), Rounds: r.t.p.Rounds, PDUs: r.got, Corrupt: r.bad}
	want := r.t.roundsPer() * len(r.c.Senders)
	switch {
	case r.failed != "":
		return row, r.failed
	case r.got != want:
		return row, fmt.Sprintf("%d PDUs delivered of %d (receiver's driver: %+v)", r.got, want, r.rx.Driver.Stats())
	case r.bad > 0:
		return row, fmt.Sprintf("%d PDUs delivered with wrong bytes", r.bad)
	}
	var sum sim.Time
	for j := r.t.p.Warmup; j < r.t.roundsPer(); j++ {
		if at(&r.first, j) == 0 || at(&r.done, j) < r.first[j] {
			return row, fmt.Sprintf("round %d was not observed whole", j)
		}
		sum += r.done[j] - r.first[j]
	}
	row.ReceiveUS = sum.Seconds() * 1e6 / float64(r.t.p.Rounds)
	row.RxMbps = float64(row.Cells*48*8) / row.ReceiveUS
	return row, ""
}

// Result implements workload.Workload.
func (t *Test) Result() (workload.Result, error) {
	var res workload.Result
	var rows []Row
	tab := shape.Table{
		Title: fmt.Sprintf("Interleaved receive: %d cells a round from the senders' PDUs through the switch (mean of %d rounds; rate in Mbit/s of cell payload)", t.p.PDUCells, t.p.Rounds),
		Columns: []shape.Column{{Name: "case"}, {Name: "receiver", Doc: "the host that receives"},
			{Name: "rx", Doc: "how its driver takes cells off the board: pio, a DMA mode, or the VCI sorter"},
			{Name: "interrupt", Doc: "when the board interrupts on receive"}, {Name: "CRC", Doc: "who checks the AAL5 CRC: software or the board"},
			{Name: "senders", Doc: "hosts sending a PDU each round"}, {Name: "cells", Doc: "cells arriving at the receiver each round"},
			{Name: "receive", Unit: "us", Doc: "the mean time to receive a round's cells"},
			{Name: "rx", Unit: "Mbit/s", Doc: "the receive rate of cell payload (48 bytes a cell): cells over receive"}},
	}
	for _, r := range t.cases {
		row, bad := r.row()
		rows = append(rows, row)
		crc := "software"
		if row.CRCAssist {
			crc = "board"
		}
		cells := []string{row.Case, row.Receiver, row.Rx, row.RxInterrupt, crc, fmt.Sprint(row.Senders), fmt.Sprint(row.Cells)}
		if bad != "" {
			if res.Incomplete == "" {
				res.Incomplete = fmt.Sprintf("yesv2-interleave case %q: %s", r.c.Name, bad)
			}
			tab.Rows = append(tab.Rows, append(cells, "-", "-"))
			continue
		}
		tab.Rows = append(tab.Rows, append(cells, fmt.Sprintf("%.1f", row.ReceiveUS), fmt.Sprintf("%.1f", row.RxMbps)))
	}
	res.Sections = []workload.Section{{Name: "yesv2_interleave", Value: rows}}
	res.Figures = shape.Figures{Tables: []shape.Table{tab}}
	return res, nil
}
