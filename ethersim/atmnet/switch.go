package atmnet

import (
	"fmt"
	"slices"
	"strings"

	"simkron/sim"
)

// Switch is an ATM cell switch: ports on links, a static routing table
// from (input port, VC) to (output port, VC), and a bounded FIFO per
// output port.
//
//	link ─► in port: HEC check ─► route lookup ─► Latency ─► out queue ─► line
//	         (bad: drop)           (none: drop)             (full: drop)
//
// A cell whose header fails the HEC is dropped (or, with HECCorrect, a
// single-bit error is corrected first); a cell on a VC with no route is
// dropped; a cell whose output port already holds QueueCells cells is
// dropped. Each drop is counted with its reason. The output port rewrites
// the label to the outgoing VC with a new HEC and sends one cell per
// slot. Routes are one-way: a bidirectional VC is two routes.
type Switch struct {
	net    *Network
	name   string
	p      SwitchParams
	ports  []*Port
	routes map[routeKey]route
	stats  SwitchStats
}

type routeKey struct {
	port int
	vc   VC
}

type route struct {
	port int
	vc   VC
}

// SwitchStats counts the switch's cells and drops.
type SwitchStats struct {
	Cells      uint64 // cells received by the ports
	Forwarded  uint64 // cells queued for an output port
	BadHEC     uint64 // dropped: header error the HEC caught
	Corrected  uint64 // single-bit header errors corrected (HECCorrect)
	Unrouted   uint64 // dropped: no route for the input port and VC
	QueueDrops uint64 // dropped: output queue full
}

// Port is one port of a switch: the receiver of its link's end and the
// transmitter into it.
type Port struct {
	sw      *Switch
	index   int
	end     *End
	queue   []queued // ring
	head, n int
	startEv *sim.Event
	stats   PortStats
}

// PortStats counts one output port.
type PortStats struct {
	TxCells    uint64 `stat:"tx_cells" help:"cells the port sent onto its link"`
	QueueDrops uint64 `stat:"queue_drops" help:"cells dropped: the output queue full"`
	QueuePeak  int    `stat:"queue_peak" help:"most cells ever held for the port"`
}

type queued struct {
	cell  Cell
	ready sim.Time
}

// NewSwitch creates a switch called name.
func (n *Network) NewSwitch(name string, p SwitchParams) (*Switch, error) {
	if err := n.claim(name); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("atmnet: switch %q: %w", name, err)
	}
	s := &Switch{net: n, name: name, p: p, routes: map[routeKey]route{}}
	n.switches[name] = s
	return s, nil
}

// Switches returns the switches sorted by name.
func (n *Network) Switches() []*Switch {
	out := make([]*Switch, 0, len(n.switches))
	for _, s := range n.switches {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y *Switch) int { return strings.Compare(x.name, y.name) })
	return out
}

// Name returns the switch's name.
func (s *Switch) Name() string { return s.name }

// Stats returns the switch's counters.
func (s *Switch) Stats() SwitchStats { return s.stats }

// Ports returns the ports in the order they were connected.
func (s *Switch) Ports() []*Port { return append([]*Port(nil), s.ports...) }

// Connect makes end (normally a link's network side) a new port and
// returns its index.
func (s *Switch) Connect(end *End) (int, error) {
	if end.rx != nil {
		return 0, fmt.Errorf("atmnet: switch %q: %s already has a receiver", s.name, end.name)
	}
	p := &Port{sw: s, index: len(s.ports), end: end, queue: make([]queued, s.p.QueueCells)}
	p.startEv = sim.NewEvent(fmt.Sprintf("%s.port%d.start", s.name, p.index), p.start)
	end.SetReceiver(p)
	end.OnTxDone = p.kick
	s.ports = append(s.ports, p)
	return p.index, nil
}

// Route sends cells arriving on input port in with label from to output
// port out, relabelled to.
func (s *Switch) Route(in int, from VC, out int, to VC) error {
	if in < 0 || in >= len(s.ports) || out < 0 || out >= len(s.ports) {
		return fmt.Errorf("atmnet: switch %q: route %d:%v -> %d:%v names a port that does not exist (%d ports)", s.name, in, from, out, to, len(s.ports))
	}
	k := routeKey{in, from}
	if _, dup := s.routes[k]; dup {
		return fmt.Errorf("atmnet: switch %q: port %d VC %v routed twice", s.name, in, from)
	}
	s.routes[k] = route{out, to}
	return nil
}

// Index returns the port's index.
func (p *Port) Index() int { return p.index }

// Switch returns the switch the port belongs to.
func (p *Port) Switch() *Switch { return p.sw }

// Stats returns the port's counters.
func (p *Port) Stats() PortStats { return p.stats }

// ReceiveCell implements Receiver: the input side of the port.
func (p *Port) ReceiveCell(c *Cell) {
	s := p.sw
	where := p.end.name
	s.stats.Cells++
	if !c.HECOK() {
		if !s.p.HECCorrect || !c.CorrectHEC() {
			s.stats.BadHEC++
			s.net.emit(where, TraceBadHEC, c)
			return
		}
		s.stats.Corrected++
	}
	r, ok := s.routes[routeKey{p.index, c.VC()}]
	if !ok {
		s.stats.Unrouted++
		s.net.emit(where, TraceUnrouted, c)
		return
	}
	s.ports[r.port].enqueue(c, r.vc)
}

// enqueue takes a cell for this output port, relabelled to vc.
func (p *Port) enqueue(c *Cell, vc VC) {
	s := p.sw
	if p.n == len(p.queue) {
		s.stats.QueueDrops++
		p.stats.QueueDrops++
		s.net.emit(p.end.name, TraceQueueDrop, c)
		return
	}
	s.stats.Forwarded++
	q := &p.queue[(p.head+p.n)%len(p.queue)]
	q.cell = *c
	q.cell.SetVC(vc)
	q.ready = s.net.k.Now() + s.p.Latency
	p.n++
	p.stats.QueuePeak = max(p.stats.QueuePeak, p.n)
	p.kick()
}

// kick starts the head cell when it is through the fabric and the line
// is free; it is also the line's OnTxDone.
func (p *Port) kick() {
	if p.n == 0 || p.end.busy || p.startEv.Scheduled() {
		return
	}
	k := p.sw.net.k
	p.sw.net.k.Schedule(p.startEv, max(k.Now(), p.queue[p.head].ready))
}

func (p *Port) start() {
	if p.end.busy {
		return // the line's OnTxDone kicks again
	}
	q := &p.queue[p.head]
	if err := p.end.Send(&q.cell); err != nil {
		panic(fmt.Sprintf("atmnet: %s: %v with the line idle", p.end.name, err))
	}
	p.head = (p.head + 1) % len(p.queue)
	p.n--
	p.stats.TxCells++
}
