// Package atmnet is the ATM side of simkron's network: full-duplex TAXI
// point-to-point links carrying real 53-byte cells, a loop-back cable, an
// ATM switch that routes by VPI/VCI with bounded output queues, seeded
// cell loss and bit errors, the HEC made by senders and checked by
// receivers, pcap taps that write AAL5 PDUs as LINKTYPE_SUNATM records,
// and a cell-level text trace. It is a sibling of the Ethernet segments
// in ethersim, in a package of its own because cells and frames share
// nothing below the pcap writer.
//
// Layer: the wire. It imports only sim (and gopacket's pcap writer): a
// host interface model attaches to an End as a Receiver and sends through
// it; nothing here knows the hosts' software.
//
// Timing. A cell handed to End.Send leaves at once; its last bit reaches
// the far end a cell time (53 bytes at LinkParams.Rate) plus the
// propagation delay later, and the sender may start the next cell one
// slot (52 bytes at LinkParams.PayloadRate) after the first: see
// LinkParams for the reading of the seed's 94.5 Mbit/s. The line is idle
// between cells a sender does not fill; idle cells are not modelled.
//
// Simplifications: a link's two directions share parameters; faults are
// drawn per cell at the receiving end, after any tap (a tap shows what
// was sent); a corrupted cell has exactly one bit flipped; the switch has
// no VP switching beyond rewriting labels, no CLP-based discard, no EFCI
// marking and no OAM.
package atmnet

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"simkron/sim"
	"simkron/trace"
)

// Receiver is the network side of a host interface or switch port: the
// link delivers every cell that reaches its end, when its last bit has
// arrived. c is valid only during the call. A cell damaged on the way
// arrives with a bit flipped and the HEC as sent.
type Receiver interface {
	ReceiveCell(c *Cell)
}

// ErrBusy is returned by End.Send while the previous cell's slot lasts.
var ErrBusy = errors.New("atmnet: the line is still sending a cell")

// Network holds the links and switches of one simulation, by name.
type Network struct {
	k        *sim.Scheduler
	links    map[string]*Link
	switches map[string]*Switch
	// Trace is the network's trace source: it fires at every trace point
	// of every link and switch (TraceKind). A listener must not send.
	Trace trace.Source[TraceRecord]
}

// New returns an empty network driven by k.
func New(k *sim.Scheduler) *Network {
	return &Network{k: k, links: map[string]*Link{}, switches: map[string]*Switch{}}
}

// Scheduler returns the event scheduler.
func (n *Network) Scheduler() *sim.Scheduler { return n.k }

func (n *Network) emit(where string, kind TraceKind, c *Cell) {
	if n.Trace.Listened() {
		n.Trace.Fire(TraceRecord{At: n.k.Now(), Where: where, Kind: kind, Cell: c})
	}
}

func (n *Network) claim(name string) error {
	if name == "" {
		return fmt.Errorf("atmnet: a link or switch has no name")
	}
	if n.links[name] != nil || n.switches[name] != nil {
		return fmt.Errorf("atmnet: %q created twice", name)
	}
	return nil
}

// Link is a full-duplex point-to-point line, or a loop-back cable whose
// one end hears itself.
type Link struct {
	net  *Network
	name string
	p    LinkParams
	a, b *End
}

// NewLink creates a link called name with ends name.a and name.b. By
// convention a is the user side (a host interface) and b the network side
// (a switch port); a tap marks cells sent from a as DTE to DCE.
func (n *Network) NewLink(name string, p LinkParams) (*Link, error) {
	if err := n.claim(name); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("atmnet: link %q: %w", name, err)
	}
	l := &Link{net: n, name: name, p: p}
	l.a = newEnd(l, name+".a", true)
	l.b = newEnd(l, name+".b", false)
	l.a.peer, l.b.peer = l.b, l.a
	n.links[name] = l
	return l, nil
}

// NewLoopback creates a cable from a transmitter to its own receiver: one
// end, name.a, whose cells arrive back at it.
func (n *Network) NewLoopback(name string, p LinkParams) (*Link, error) {
	if err := n.claim(name); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("atmnet: loop-back %q: %w", name, err)
	}
	l := &Link{net: n, name: name, p: p}
	l.a = newEnd(l, name+".a", true)
	l.a.peer = l.a
	n.links[name] = l
	return l, nil
}

// Links returns the links sorted by name.
func (n *Network) Links() []*Link {
	out := make([]*Link, 0, len(n.links))
	for _, l := range n.links {
		out = append(out, l)
	}
	slices.SortFunc(out, func(x, y *Link) int { return strings.Compare(x.name, y.name) })
	return out
}

// Name returns the link's name.
func (l *Link) Name() string { return l.name }

// Params returns the link's parameters.
func (l *Link) Params() LinkParams { return l.p }

// A returns the user-side end (the only end of a loop-back).
func (l *Link) A() *End { return l.a }

// B returns the network-side end, nil for a loop-back.
func (l *Link) B() *End { return l.b }

// End is one end of a link: a transmitter into the line and the receiver
// of what the line brings. Faults apply to the cells arriving here.
//
//	idle ──Send──► sending ──slot over──► idle (OnTxDone)
type End struct {
	link   *Link
	name   string
	dte    bool
	peer   *End // where cells sent here arrive
	rx     Receiver
	faults FaultParams
	rng    *rand.Rand

	busy   bool
	doneEv *sim.Event
	pool   []*transit
	taps   []*tap

	// OnTxDone, if set, is called when the slot of the cell sent last is
	// over: the end may Send again during the call.
	OnTxDone func()

	stats EndStats
}

// EndStats counts one end's traffic and the faults of cells arriving at
// it.
type EndStats struct {
	TxCells    uint64 `stat:"tx_cells" help:"cells sent from this end"`
	RxCells    uint64 `stat:"rx_cells" help:"cells handed to the receiver"`
	Lost       uint64 `stat:"lost" help:"cells lost on the way here (cell_loss)"`
	Corrupted  uint64 `stat:"corrupted" help:"cells delivered with a bit flipped (bit_error)"`
	NoReceiver uint64 `stat:"no_receiver" help:"cells that arrived with no receiver attached"`
}

func newEnd(l *Link, name string, dte bool) *End {
	e := &End{link: l, name: name, dte: dte, rng: l.net.k.Stream("atmnet/" + name + "/faults")}
	e.doneEv = sim.NewEvent(name+".slot", e.slotOver)
	return e
}

// Name returns the end's name ("lo0.a").
func (e *End) Name() string { return e.name }

// Link returns the link the end belongs to.
func (e *End) Link() *Link { return e.link }

// Stats returns the counters.
func (e *End) Stats() EndStats { return e.stats }

// SetReceiver attaches what receives the cells arriving at this end.
func (e *End) SetReceiver(r Receiver) { e.rx = r }

// SetFaults changes the faults of cells arriving here from now on.
func (e *End) SetFaults(f FaultParams) error {
	if err := f.Validate(); err != nil {
		return err
	}
	e.faults = f
	return nil
}

// Busy reports whether the last cell's slot is still running.
func (e *End) Busy() bool { return e.busy }

// Send starts sending c (copied) now. The sender made its HEC. It is an
// error to send while Busy.
func (e *End) Send(c *Cell) error {
	if e.busy {
		return fmt.Errorf("%w on %s", ErrBusy, e.name)
	}
	k := e.link.net.k
	e.busy = true
	e.stats.TxCells++
	e.link.net.emit(e.name, TraceTx, c)
	for _, t := range e.taps {
		t.cell(c)
	}
	k.ScheduleAfter(e.doneEv, e.link.p.SlotTime())
	var t *transit
	if n := len(e.pool); n > 0 {
		t = e.pool[n-1]
		e.pool = e.pool[:n-1]
	} else {
		t = &transit{from: e}
		t.ev = sim.NewEvent(e.name+".transit", t.arrive)
	}
	t.cell = *c
	k.ScheduleAfter(t.ev, e.link.p.CellTime()+e.link.p.Propagation)
	return nil
}

func (e *End) slotOver() {
	e.busy = false
	if e.OnTxDone != nil {
		e.OnTxDone()
	}
}

// transit is a pooled cell on its way to the far end, with its event.
type transit struct {
	from *End
	ev   *sim.Event
	cell Cell
}

func (t *transit) arrive() {
	e := t.from
	c := t.cell
	e.pool = append(e.pool, t) // free before delivery: the receiver may send
	e.peer.receive(&c)
}

// receive applies the faults of this end and hands c to the receiver.
func (e *End) receive(c *Cell) {
	n := e.link.net
	f := &e.faults
	if f.CellLoss > 0 && e.rng.Float64() < f.CellLoss {
		e.stats.Lost++
		n.emit(e.name, TraceLost, c)
		return
	}
	if f.BitError > 0 && e.rng.Float64() < f.BitError {
		bit := e.rng.IntN(CellSize * 8)
		c[bit/8] ^= 0x80 >> (bit % 8)
		e.stats.Corrupted++
		n.emit(e.name, TraceCorrupt, c)
	}
	if e.rx == nil {
		e.stats.NoReceiver++
		return
	}
	e.stats.RxCells++
	n.emit(e.name, TraceRx, c)
	e.rx.ReceiveCell(c)
}

// Network returns the network the link belongs to.
func (l *Link) Network() *Network { return l.net }
