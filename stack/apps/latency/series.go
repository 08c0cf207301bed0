package latency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"simkron/cpu"
	"simkron/memory"
	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/trace"
	"simkron/workload"
)

// Params are the series' settings that every protocol shares.
type Params struct {
	Client   string   `toml:"client" help:"host that sends each message and waits for its echo"`
	Server   string   `toml:"server" help:"host that echoes each message"`
	Sizes    []int    `toml:"sizes" nonempty:"true" min:"4" max:"1048576" help:"message sizes in bytes"`
	Messages int      `toml:"messages" min:"1" max:"1000000" help:"measured round trips per size"`
	Warmup   int      `toml:"warmup" min:"0" max:"1000" help:"round trips per size before measuring (the first also resolves ARP)"`
	Port     uint16   `toml:"port" min:"1" help:"server's port"`
	Timeout  sim.Time `toml:"timeout" min:"1ms" help:"how long a program waits for a message: an echo not back by then is lost (UDP), or the series gives up (TCP)"`
	// SendSpan and ReceiveSpan choose between the definitions of the
	// package doc.
	SendSpan    string `toml:"send_span" help:"what a send's latency counts: \"thread\" (the sending thread's own cycles inside the call) or \"dma\" (the Linux/SimOS study's: every cycle of the sending host from the call's entry, a system call's trap included, until the message has left host memory, its last DMA done and that interrupt handled, by layer; the call's own cycles are reported beside)"`
	ReceiveSpan string `toml:"receive_span" help:"what a receive's latency counts: \"arrival\" (every cycle of the receiving host from the first frame's arrival at the card until the receive call returns, the wait for the wire and the card as DMA) or \"dma\" (the Linux/SimOS study's: the same span without the time the host waited for the wire, idle counted as DMA only while the card's DMA engine moved data; the whole span is reported beside)"`
}

// Send spans (Params.SendSpan) and receive spans (Params.ReceiveSpan):
// the definitions of the package doc.
const (
	SpanThread  = "thread"
	SpanDMA     = "dma"
	SpanArrival = "arrival"
)

// Validate checks what the field bounds cannot; the Validate of a
// protocol's parameters, which embed these, calls it.
func (p Params) Validate() error {
	switch p.SendSpan {
	case "", SpanThread, SpanDMA:
	default:
		return fmt.Errorf("send_span: %q is neither %q nor %q", p.SendSpan, SpanThread, SpanDMA)
	}
	switch p.ReceiveSpan {
	case "", SpanArrival, SpanDMA:
	default:
		return fmt.Errorf("receive_span: %q is neither %q nor %q", p.ReceiveSpan, SpanArrival, SpanDMA)
	}
	return nil
}

// dmaSend reports whether a send runs until its message has left host
// memory (the study's definition).
func (p Params) dmaSend() bool { return p.SendSpan == SpanDMA }

// dmaReceive reports whether a receive leaves out the wait for the wire
// (the study's definition).
func (p Params) dmaReceive() bool { return p.ReceiveSpan == SpanDMA }

// MaxSize is the largest message.
func (p Params) MaxSize() int { return slices.Max(p.Sizes) }

// Protocol is a protocol the series runs over: the calls its two
// programs make, and the simulator's view of its packets. Its methods
// run on the simulated hosts' threads or in the simulator's observers.
type Protocol interface {
	// Info describes the protocol.
	Info() Info
	// Listen opens the server's end on its thread and returns once a
	// client can be served.
	Listen(t *kernel.Thread, e *End) (Conn, error)
	// Dial opens the client's end to the server on its thread.
	Dial(t *kernel.Thread, e *End) (Conn, error)
	// Tracker returns the simulator's view of the protocol's packets at
	// e's host, made when the series is prepared (before any frame).
	Tracker(e *End) Tracker
}

// Info describes a protocol to the series and its reports.
type Info struct {
	// Name is the protocol's name in reports: "UDP".
	Name string
	// Send and Recv name the measured calls as reports name them
	// ("sendto", "recvfrom"); SendSymbol and RecvSymbol are the modelled
	// functions whose entry and exit delimit them ("sys_sendto").
	Send, Recv             string
	SendSymbol, RecvSymbol string
	// SendNote and RecvNote, when the measured symbols hold more than the
	// calls Send and Recv name, say what, for titles ("" otherwise).
	SendNote, RecvNote string
	// Unit names the packets that carry a message, for the table's
	// packets column: "frags", "segs".
	Unit string
	// Main is the programs' own function, defined on both hosts.
	Main cpu.Def
	// NoIP says that the protocol runs without the Internet protocols
	// (VIA): its hosts need no IP address.
	NoIP bool
	// Compat is what the protocol's program did differently before it
	// became this one; a new protocol leaves it zero.
	Compat Compat
}

// Conn is one end of a connection over a protocol, as Listen and Dial
// open it.
type Conn interface {
	// Send sends the n bytes at buf as one message.
	Send(t *kernel.Thread, buf memory.Addr, n int) error
	// Recv receives one message into buf, which holds the series'
	// largest, waiting at most timeout. n is the size the schedule
	// expects next, 0 when the schedule has ended. It returns ErrTimeout
	// when nothing came in time and ErrEnd when a protocol that keeps
	// message boundaries by the schedule has nothing more to receive.
	Recv(t *kernel.Thread, buf memory.Addr, n int, timeout sim.Time) (int, error)
	// Packets returns how many packets carry a message of n bytes.
	Packets(n int) int
	// Close closes the end.
	Close(t *kernel.Thread)
}

// Errors of Conn.Recv.
var (
	ErrTimeout = errors.New("timed out")
	ErrEnd     = errors.New("end of the schedule")
)

// Tracker is the simulator's view of a protocol's packets at one host,
// for the receive latency: which frame starts a message, and which
// messages a receive call completes. It only looks; the host is never
// charged for it.
type Tracker interface {
	// Frame sees a frame that has just reached the host's card. now
	// reads the host's counters at this moment into its argument (whose
	// array it reuses): the start of a message's arrival.
	Frame(f []byte, now func(*cpu.Account))
	// Completed is called when the host's receive call returns, with the
	// program's receive buffer. It returns the messages the call
	// completed, with the counters their first frames recorded; the
	// slice is valid until the next call.
	Completed(c *cpu.CPU, buf memory.Addr) []Arrival
}

// WholeTracker is a Tracker that needs the whole of frames its host's card
// shows only the first part of at their arrival (Host.Whole): Frame
// still sees each first part (its now gives the arrival's moment), then
// Whole the frame once all of it is in.
type WholeTracker interface {
	Tracker
	Whole(f []byte)
}

// Arrival is a message a receive call completed: its index in the
// schedule and the host's counters when its first frame arrived.
type Arrival struct {
	Msg   int
	Start cpu.Account
}

// Message is one round trip of the schedule.
type Message struct {
	Size     int    // bytes
	Offset   uint64 // of its first byte in either direction's byte stream
	sizeIdx  int    // index into Params.Sizes
	measured bool
}

// Compat holds what the UDP and TCP series did differently before they
// became this one program, kept so that their results and captures stay
// byte-identical with earlier releases. A new protocol leaves it zero.
type Compat struct {
	// StampOrigin is the first message's stamp: the UDP series numbered
	// its messages from 1.
	StampOrigin uint32
	// RestoreStamp rewrites the pattern's first word after each size,
	// as the UDP client did.
	RestoreStamp bool
}

// Series is the echo latency measured over one protocol between two
// hosts for a series of message sizes, each size a number of round trips.
type Series struct {
	p    Params
	tr   Protocol
	info Info
	ends [2]*End // client, server
	// The schedule is worked out message by message (msg): a million
	// messages of each size take no memory before they are sent.
	perSize  int      // messages of each size, warm-up ones included
	total    int      // messages in all
	firstOff []uint64 // the stream offset of each size's first message
	rows     []Row
	sendSamp [][]float64
	recvSamp [][]float64
	// sendThreadSamp and recvArrSamp are the natural definitions reported
	// beside the study's (send_span, receive_span "dma").
	sendThreadSamp [][]float64
	recvArrSamp    [][]float64
	sendLay        []layerSums
	recvLay        []layerSums
	// slotOf and slotLayer number the layers the sums have seen; the
	// idle loop's and DMA's slots are numbered first.
	slotOf            map[cpu.Layer]int
	slotLayer         []cpu.Layer
	idleSlot, dmaSlot int
	rttSum            []sim.Time
	// sent counts, per size, the measured messages the client has sent.
	sent []int
	// Per message, for medians by layer (samples.go).
	samples samples
	// replied marks the messages the client has had its echo of.
	replied msgSet
	done    bool
	// finished is set once the rows are summed up (finish).
	finished bool
	failed   string
	// marks is the source of the measured messages' marks (marks.go):
	// the series' own, or one its workload shares among its series.
	marks *trace.Source[workload.Mark]
}

// End is one host's end of a series: what the simulator's measurements
// know of its program.
type End struct {
	Host *Endpoint
	s    *Series
	main *cpu.Symbol
	buf  memory.Addr // the program's receive buffer
	conn Conn
	tr   Tracker
	// sending is the schedule index of the message the program is
	// sending (-1: none).
	sending  int
	sendSym  *cpu.Symbol
	recvSym  *cpu.Symbol
	sendFrom int64
	// sendCycle is the core's cycle at the measured call's entry.
	sendCycle int64
	sendLay   []cpu.LayerCycles
	layBuf    []cpu.LayerCycles // a reading at a send's end
	sendAcct  cpu.Account       // the host's counters at the call's entry (send_span "dma")
	tail      sendTail          // a "dma" send whose message is still in host memory
	wire      wireWait          // the host's idle cycles with its card's DMA engine idle
	// sys is the host's counters at the entry of the system call the
	// program's context sysCtx is in, while sysIn (send_span "dma"): a
	// send call made by a system call is entered there, its trap and the
	// system call's dispatch being the call's cycles too.
	sys    cpu.Account
	sysIn  bool
	sysCtx *cpu.Context
	// pending are the receive latencies of the messages the program's
	// last receive calls completed, until the program knows which message
	// it has (a duplicate or a stale echo is not measured).
	pending []recvSample
	// sendDone and recvDone mark the messages measured at this host: one
	// sample each, however many copies the faults made.
	sendDone, recvDone msgSet
	// slot maps the host's core's layer indices to the series' slots.
	slot []int
}

// sendTail is a "dma" send after its call has returned, while its message
// is still in host memory: the counters at the return, and the cycles of
// the interrupts handled since (by the core's layer index), until the
// interrupt after which nothing of it is left.
//
// The core charges lazily: the return is read when the call's work has
// been charged, and an interrupt that came meanwhile is handled after it,
// at its own (earlier) cycle, delaying the return by its handler's cycles.
// rt is the return as the interrupts move it: an interrupt that starts
// before rt moves it by its cycles; one after it is the host's work while
// the message waits.
type sendTail struct {
	si       int // the size's index; -1: no tail
	msg      int // the message's schedule index
	ret      cpu.Account
	rt       int64
	irqFrom  cpu.Account // at the entry of the outermost interrupt running
	irqTo    cpu.Account
	depth    int
	irq      []int64 // interrupt cycles by the core's layer index
	irqNames []cpu.Layer
	irqTotal int64
	end      cpu.Account // the span's end, built from the pieces
}

// wireWait follows, for the "dma" receive, the host's halted cycles while
// its card's DMA engine was idle: the wait for the wire. The total up to a
// reading is w plus, when the engine is idle, the idle cycles since mark;
// at is the value when each of the last readings that start a receive
// was taken, by the reading's cycle.
type wireWait struct {
	on         bool // the card's engine is observed
	busy       bool
	w, mark    int64
	reading    cpu.Account
	at         [32]struct{ cycle, w int64 }
	next       int
	unresolved int // receive starts whose wait was not found (a bug)
}

// recvSample is one message's receive latency at a host: its counters at
// the first frame and when the receive call completing it returned.
type recvSample struct {
	msg        int
	start, end cpu.Account
	wire       int64 // the host's wait for the wire in the span ("dma" receive)
}

// NewSeries prepares the series over tr between client and server: it
// defines the programs' function on both hosts and installs the
// measurement. Start (or Serve and Client on threads of one's own)
// runs it.
func NewSeries(p Params, tr Protocol, client, server *Endpoint) (*Series, error) {
	info := tr.Info()
	if !info.NoIP && (client.Inet == nil || server.Inet == nil) {
		return nil, fmt.Errorf("both hosts need an IP address on a card")
	}
	n := len(p.Sizes)
	// What is kept per size is allocated here; what is kept per message
	// grows as messages are measured.
	s := &Series{p: p, tr: tr, info: info, rows: make([]Row, n), samples: newSamples(n),
		sendSamp: make([][]float64, n), recvSamp: make([][]float64, n),
		sendLay: make([]layerSums, n), recvLay: make([]layerSums, n), rttSum: make([]sim.Time, n), sent: make([]int, n),
		slotOf:  map[cpu.Layer]int{},
		perSize: p.Warmup + p.Messages, total: n * (p.Warmup + p.Messages), firstOff: make([]uint64, n),
		marks: &trace.Source[workload.Mark]{}}
	if p.dmaSend() {
		s.sendThreadSamp = make([][]float64, n)
	}
	if p.dmaReceive() {
		s.recvArrSamp = make([][]float64, n)
	}
	s.idleSlot, s.dmaSlot = s.slotFor(cpu.LayerIDLE), s.slotFor(cpu.LayerDMA)
	var off uint64
	for si, size := range p.Sizes {
		s.rows[si].Size = size
		s.firstOff[si] = off
		off += uint64(s.perSize) * uint64(size)
	}
	for i, h := range []*Endpoint{client, server} {
		s.ends[i] = &End{Host: h, s: s, sending: -1, main: h.Kernel.Symbols().Define(s.info.Main), tail: sendTail{si: -1}}
	}
	for _, e := range s.ends {
		e.watch()
	}
	return s, nil
}

// Protocol returns the series' protocol.
func (s *Series) Protocol() Protocol { return s.tr }

// Params returns the series' settings.
func (s *Series) Params() Params { return s.p }

// Hosts returns the series' client and server.
func (s *Series) Hosts() (client, server *Endpoint) { return s.ends[0].Host, s.ends[1].Host }

// Total returns the messages of the schedule, warm-up ones included.
func (s *Series) Total() int { return s.total }

// Message returns round trip i of the schedule (0 <= i < Total).
func (s *Series) Message(i int) Message { return s.msg(i) }

// msg returns round trip i of the schedule: each size in turn, its
// warm-up round trips first.
func (s *Series) msg(i int) Message {
	si, k := i/s.perSize, i%s.perSize
	size := s.p.Sizes[si]
	return Message{Size: size, Offset: s.firstOff[si] + uint64(k)*uint64(size), sizeIdx: si, measured: k >= s.p.Warmup}
}

// msgSet is a set of schedule indices, a bit each, that grows as they
// are added: by doubling, from room for firstRoom messages.
type msgSet []uint64

func (m msgSet) has(i int) bool { return i>>6 < len(m) && m[i>>6]&(1<<(i&63)) != 0 }

func (m *msgSet) add(i int) {
	if w := i >> 6; w >= len(*m) {
		grown := make(msgSet, max(w+1, 2*len(*m), firstRoom>>6))
		copy(grown, *m)
		*m = grown
	}
	(*m)[i>>6] |= 1 << (i & 63)
}

// firstRoom is how many messages the growing per-message records first
// make room for, so that a short series grows them once at most.
const firstRoom = 4096

// addSample appends v to a size's samples, making room for the first
// firstRoom (or the size's whole count, if fewer) at the first.
func addSample(xs *[]float64, v float64, count int) {
	if *xs == nil {
		*xs = make([]float64, 0, min(count, firstRoom))
	}
	*xs = append(*xs, v)
}

// Rows returns the results once the client has ended.
func (s *Series) Rows() []Row { return s.rows }

// Failed says why the series stopped early ("" when it did not).
func (s *Series) Failed() string { return s.failed }

func (s *Series) fail(format string, args ...any) {
	if s.failed == "" {
		s.failed = fmt.Sprintf(format, args...)
	}
}

// Start spawns the echo server and the client, each on a thread of its
// own host.
func (s *Series) Start() {
	name := s.name()
	s.ends[1].Host.Kernel.Spawn(name+"echo", s.Serve)
	s.ends[0].Host.Kernel.Spawn(name+"client", s.Client)
}

// name is the protocol's name in lower case: "udp", the series'
// section and the prefix of its threads' names.
func (s *Series) name() string { return strings.ToLower(s.info.Name) }

// Peer returns the other end of e's series.
func (e *End) Peer() *End {
	if e == e.s.ends[0] {
		return e.s.ends[1]
	}
	return e.s.ends[0]
}

// Series returns the series e belongs to.
func (e *End) Series() *Series { return e.s }

// Conn returns e's connection, nil before Listen or Dial returned.
func (e *End) Conn() Conn { return e.conn }

// Buffer returns the program's receive buffer, allocated from the
// kernel at the first call: the server's after its protocol's Listen,
// unless the protocol asks for it earlier.
func (e *End) Buffer() memory.Addr {
	if e.buf == 0 {
		e.buf = e.Host.Kernel.Kmalloc(e.s.p.MaxSize())
	}
	return e.buf
}

// stamp returns the schedule index a message's stamp names, -1 when it
// names none.
func (s *Series) index(stamp uint32) int {
	i := int(int64(stamp) - int64(s.info.Compat.StampOrigin))
	if i < 0 || i >= s.total {
		return -1
	}
	return i
}

// Serve is the echo server's program, to run on a thread of the server
// host: it echoes every message until the series has ended.
func (s *Series) Serve(t *kernel.Thread) {
	e := s.ends[1]
	h := e.Host
	c := h.Kernel.CPU()
	c.Enter(e.main)
	defer c.Exit(e.main)
	conn, err := s.tr.Listen(t, e)
	if err != nil {
		s.fail("%s: %v", h.Name, err)
		return
	}
	e.conn = conn
	buf := e.Buffer()
	var stamp [4]byte
	for next := 0; !s.done; {
		n := 0
		if next < s.total {
			n = s.msg(next).Size
		}
		got, err := conn.Recv(t, buf, n, s.p.Timeout)
		if errors.Is(err, ErrTimeout) {
			continue
		}
		if errors.Is(err, ErrEnd) {
			break
		}
		if err != nil {
			s.fail("%s: %v", h.Name, err)
			break
		}
		next++
		// Which message this is, for the measurement (not charged): its
		// first copy's receive is measured, and the echo it gets.
		i := -1
		if got >= len(stamp) {
			c.System().Phys.Read(buf, stamp[:])
			i = s.index(binary.BigEndian.Uint32(stamp[:]))
		}
		e.commit(i)
		e.sending = i
		if err := conn.Send(t, buf, got); err != nil {
			s.fail("%s: %v", h.Name, err)
			break
		}
	}
	conn.Close(t)
}

func payloadByte(i int) byte { return byte(i*7 + i>>8 + 1) }

// Client is the client's program, to run on a thread of the client host.
func (s *Series) Client(t *kernel.Thread) {
	e := s.ends[0]
	h := e.Host
	k := h.Kernel
	c := k.CPU()
	c.Enter(e.main)
	defer c.Exit(e.main)
	defer func() { s.done = true; s.finish() }()
	size := s.p.MaxSize()
	out := k.Kmalloc(size)
	in := k.Kmalloc(size)
	e.buf = in
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = payloadByte(i)
	}
	c.Write(out, pattern)
	conn, err := s.tr.Dial(t, e)
	if err != nil {
		s.fail("%s: %v", h.Name, err)
		return
	}
	e.conn = conn
	for si, n := range s.p.Sizes {
		s.rows[si].Packets = conn.Packets(n)
	}
	got := make([]byte, size)
	for i := range s.total {
		if !s.exchange(t, c, conn, i, out, in, got, pattern) {
			break
		}
		if s.info.Compat.RestoreStamp && (i+1 == s.total || s.msg(i+1).sizeIdx != s.msg(i).sizeIdx) {
			c.Write(out, pattern[:4])
		}
	}
	conn.Close(t)
}

// exchange makes round trip i: stamp, send, and wait for the echo. An
// echo of an earlier message (a duplicate, or a stale one the client gave
// up on) is counted and the wait goes on; only the echo of message i ends
// it, and only that pair is measured. It returns false when the series
// cannot go on.
func (s *Series) exchange(t *kernel.Thread, c *cpu.CPU, conn Conn, i int, out, in memory.Addr, got, pattern []byte) bool {
	m := s.msg(i)
	e := s.ends[0]
	var stamp [4]byte
	seq := uint32(i) + s.info.Compat.StampOrigin
	binary.BigEndian.PutUint32(stamp[:], seq)
	c.Write(out, stamp[:])
	c.Sync()
	start := c.LocalTime()
	e.sending = i
	if m.measured {
		s.sent[m.sizeIdx]++
		s.mark(workload.MarkBegin, i)
	}
	if err := conn.Send(t, out, m.Size); err != nil {
		s.fail("%s: %v", e.Host.Name, err)
		return false
	}
	wait := s.p.Timeout
	deadline := c.LocalTime() + wait
	for {
		n, err := conn.Recv(t, in, m.Size, wait)
		c.Sync()
		if errors.Is(err, ErrTimeout) {
			e.commit(-1)
			return true // lost
		}
		if err != nil {
			s.fail("%s: %v", e.Host.Name, err)
			return false
		}
		// The simulator reads the echo; the program is not charged.
		c.System().Phys.Read(in, got[:n])
		j := -1
		if n >= len(stamp) {
			j = s.index(binary.BigEndian.Uint32(got[:4]))
		}
		switch {
		case j == i:
			s.replied.add(i)
			e.commit(i)
			if !m.measured {
				return true
			}
			row := &s.rows[m.sizeIdx]
			row.Messages++
			s.rttSum[m.sizeIdx] += c.LocalTime() - start
			if n != m.Size || string(got[4:n]) != string(pattern[4:m.Size]) {
				row.Corrupt++
			}
			return true
		case j < 0 || j > i:
			// Not an echo of anything sent: its bytes are wrong.
			if m.measured {
				s.rows[m.sizeIdx].Corrupt++
			}
		case s.replied.has(j):
			if mj := s.msg(j); mj.measured {
				s.rows[mj.sizeIdx].Duplicates++
			}
		default:
			s.replied.add(j)
			if mj := s.msg(j); mj.measured {
				s.rows[mj.sizeIdx].Stale++
			}
		}
		e.commit(-1)
		if wait = deadline - c.LocalTime(); wait <= 0 {
			return true // lost
		}
	}
}

// finish sums the rows up from what was measured: when the client ends,
// or, for a run that stopped first, when the result is taken.
func (s *Series) finish() {
	if s.finished {
		return
	}
	s.finished, s.done = true, true
	for _, e := range s.ends {
		if e.wire.unresolved > 0 {
			// A receive whose start the wait for the wire was not noted
			// at: a bug of this measurement, not of the model.
			s.fail("%s: %d receives measured without their wait for the wire", e.Host.Name, e.wire.unresolved)
		}
	}
	for si := range s.rows {
		r := &s.rows[si]
		r.Send = Summarise(s.sendSamp[si])
		r.Receive = Summarise(s.recvSamp[si])
		if r.Messages > 0 {
			r.RTTMicros = float64(s.rttSum[si]) / float64(r.Messages) / float64(sim.Microsecond)
		}
		// A message is lost when it was sent and its echo did not come
		// (or had not come when the run stopped); one never sent is not.
		r.Lost = s.sent[si] - r.Messages
		r.NotSent = s.p.Messages - s.sent[si]
		r.SendLayers = s.sendLay[si].means(s.slotLayer, r.Send.N)
		r.RecvLayers = s.recvLay[si].means(s.slotLayer, r.Receive.N)
		if s.p.dmaSend() {
			t := Summarise(s.sendThreadSamp[si])
			r.SendThread = &t
		}
		if s.p.dmaReceive() {
			a := Summarise(s.recvArrSamp[si])
			r.ReceiveArrival = &a
		}
	}
}

// watch installs e's measurement: listeners of the measured calls and of
// the core's interrupts (a "dma" send's end), of the frames reaching its
// host's card and of the card's DMA engine (a "dma" receive).
func (e *End) watch() {
	h := e.Host
	c := h.Kernel.CPU()
	e.sendSym, _ = h.Kernel.Symbols().Lookup(e.s.info.SendSymbol)
	e.recvSym, _ = h.Kernel.Symbols().Lookup(e.s.info.RecvSymbol)
	e.tr = e.s.tr.Tracker(e)
	// Listeners on the measured calls (and, for the study's send, the
	// system-call entry) alone (cpu.SymbolTrace): the others' entries and
	// exits cost nothing.
	if e.sendSym != nil && e.s.p.dmaSend() {
		// The study's send is the whole call: one made by a system call
		// begins at the system call's entry, before its trap.
		st := c.SymbolTrace(h.Kernel.SyscallSymbol())
		st.Enter.Connect(func(*cpu.Symbol) {
			e.sysIn, e.sysCtx = true, c.Current()
			c.AccountInto(&e.sys, c.LocalTime())
		})
		st.Exit.Connect(func(*cpu.Symbol) {
			if c.Current() == e.sysCtx {
				e.sysIn = false
			}
		})
	}
	if e.sendSym != nil {
		st := c.SymbolTrace(e.sendSym)
		st.Enter.Connect(func(*cpu.Symbol) {
			x := c.Current()
			e.sendFrom, e.sendLay = x.Cycles(), x.AppendLayerCycles(e.sendLay[:0])
			e.sendCycle = c.Cycles()
			if e.s.p.dmaSend() {
				if e.sysIn && e.sysCtx == x {
					e.sys.CopyTo(&e.sendAcct)
				} else {
					c.AccountInto(&e.sendAcct, c.LocalTime())
				}
				if e.tail.si >= 0 {
					// A send while the last one's message was still going
					// out: that one ends where this one begins.
					e.sendAcct.CopyTo(&e.tail.irqTo)
					e.endTail(max(e.tail.rt, e.tail.irqTo.Cycle))
				}
			}
		})
		st.Exit.Connect(func(*cpu.Symbol) { e.sent(c) })
	}
	if e.recvSym != nil && e.recvSym != e.sendSym {
		c.SymbolTrace(e.recvSym).Exit.Connect(func(*cpu.Symbol) { e.received(c) })
	}
	if e.s.p.dmaSend() {
		c.Trace.Interrupt.Connect(func(ev cpu.Interrupt) { e.interrupt(c, ev.Entry) })
	}
	now := func(a *cpu.Account) { c.AccountInto(a, c.Scheduler().Now()) }
	if e.s.p.dmaReceive() {
		// A card without a DMA engine to observe never moves data while
		// the host waits: every idle cycle is then the wire's.
		e.wire.on = true
		if h.DMA != nil {
			h.DMA.Connect(func(busy bool) { e.engine(c, busy) })
		}
		now = func(a *cpu.Account) {
			c.AccountInto(a, c.Scheduler().Now())
			e.wire.note(a)
		}
	}
	h.Received.Connect(func(f []byte) { e.tr.Frame(f, now) })
	if w, ok := e.tr.(WholeTracker); ok && h.Whole != nil {
		h.Whole.Connect(w.Whole)
	}
}

// holding reports whether any of the message just sent is still in host
// memory: with the protocol (TCP's unsent bytes) or with the card.
func (e *End) holding() bool {
	if u, ok := e.conn.(interface{ Unsent() bool }); ok && u.Unsent() {
		return true
	}
	return e.Host.TxInMemory != nil && e.Host.TxInMemory()
}

func (e *End) sent(c *cpu.CPU) {
	s := e.s
	i := e.sending
	e.sending = -1
	if s.done || i < 0 || !s.msg(i).measured || e.sendDone.has(i) {
		return
	}
	e.sendDone.add(i)
	si := s.msg(i).sizeIdx
	x := c.Current()
	thread := float64(x.Cycles() - e.sendFrom)
	e.layBuf = x.AppendLayerCycles(e.layBuf[:0])
	if !s.p.dmaSend() {
		addSample(&s.sendSamp[si], thread, 2*s.p.Messages)
		e.add(&s.sendLay[si], e.sendLay, e.layBuf)
		s.samples.addThread(si, e.sendLay, e.layBuf)
		if s.marks.Listened() {
			e.measuredThread(i, x.Name(), c.Cycles())
		}
		return
	}
	addSample(&s.sendThreadSamp[si], thread, 2*s.p.Messages)
	t := &e.tail
	t.si, t.msg = si, i
	c.AccountInto(&t.ret, c.LocalTime())
	t.depth, t.irqTotal, t.rt = 0, 0, t.ret.Cycle
	clear(t.irq)
	if !e.holding() {
		e.endTail(t.ret.Cycle)
	}
}

// interrupt follows the core's interrupts during a "dma" send's tail: their
// cycles count by layer, and the tail ends with the one after which the
// message has left host memory.
func (e *End) interrupt(c *cpu.CPU, entry bool) {
	t := &e.tail
	if t.si < 0 {
		return
	}
	if entry {
		if t.depth++; t.depth == 1 {
			c.AccountInto(&t.irqFrom, c.LocalTime())
		}
		return
	}
	if t.depth == 0 {
		return // an interrupt that was running when the tail began
	}
	if t.depth--; t.depth > 0 {
		return
	}
	c.AccountInto(&t.irqTo, c.LocalTime())
	var h int64
	for i, l := range t.irqTo.Layers {
		d := l.Cycles
		if i < len(t.irqFrom.Layers) {
			d -= t.irqFrom.Layers[i].Cycles
		}
		for len(t.irq) <= i {
			t.irq = append(t.irq, 0)
			t.irqNames = append(t.irqNames, t.irqTo.Layers[len(t.irq)-1].Layer)
		}
		t.irq[i] += d
		h += d
	}
	t.irqTotal += h
	if t.irqFrom.Cycle < t.rt {
		t.rt += h // it came before the return, which it delayed
	}
	if !e.holding() {
		e.endTail(max(t.rt, t.irqTo.Cycle))
	}
}

// endTail ends the pending tail at cycle end: the span runs from the
// call's entry; after the return, the interrupts' cycles count by layer
// and the rest as DMA (the message waiting for the card).
func (e *End) endTail(end int64) {
	t := &e.tail
	si := t.si
	t.si = -1
	s := e.s
	t.ret.CopyTo(&t.end)
	for i, d := range t.irq {
		for len(t.end.Layers) <= i {
			t.end.Layers = append(t.end.Layers, cpu.LayerCycles{Layer: t.irqNames[len(t.end.Layers)]})
		}
		t.end.Layers[i].Cycles += d
	}
	wait := max(0, end-t.ret.Cycle-t.irqTotal)
	t.end.Idle += wait
	t.end.Cycle = t.ret.Cycle + t.irqTotal + wait
	addSample(&s.sendSamp[si], float64(t.end.Cycle-e.sendAcct.Cycle), 2*s.p.Messages)
	e.addReceive(&s.sendLay[si], e.sendAcct, t.end)
	s.samples.addSpan(&s.samples.send, si, e.sendAcct, t.end)
	if s.marks.Listened() {
		e.measuredTail(t.msg, t.rt)
	}
}

// engine follows the card's DMA engine for the "dma" receive.
func (e *End) engine(c *cpu.CPU, busy bool) {
	w := &e.wire
	c.AccountInto(&w.reading, c.Scheduler().Now())
	if busy && !w.busy {
		w.w += w.reading.Idle - w.mark
	} else if !busy && w.busy {
		w.mark = w.reading.Idle
	}
	w.busy = busy
}

// total returns the wait for the wire up to the reading a, taken with no
// change of the engine since.
func (w *wireWait) total(a *cpu.Account) int64 {
	if w.busy {
		return w.w
	}
	return w.w + a.Idle - w.mark
}

// note remembers the wait for the wire at a reading that starts a receive.
func (w *wireWait) note(a *cpu.Account) {
	x := &w.at[w.next%len(w.at)]
	x.cycle, x.w = a.Cycle, w.total(a)
	w.next++
}

// at returns the wait for the wire noted at a reading of cycle cycle.
func (w *wireWait) find(cycle int64) (int64, bool) {
	for k := range min(w.next, len(w.at)) {
		x := w.at[(w.next-1-k)%len(w.at)]
		if x.cycle == cycle {
			return x.w, true
		}
	}
	return 0, false
}

// received notes the receive latency of every message the receive call
// that just returned completed; the program commits the one it has.
func (e *End) received(c *cpu.CPU) {
	if e.s.done {
		return
	}
	for _, a := range e.tr.Completed(c, e.buf) {
		// The samples' arrays are kept and reused.
		if len(e.pending) < cap(e.pending) {
			e.pending = e.pending[:len(e.pending)+1]
		} else {
			e.pending = append(e.pending, recvSample{})
		}
		p := &e.pending[len(e.pending)-1]
		p.msg = a.Msg
		a.Start.CopyTo(&p.start)
		c.AccountInto(&p.end, c.LocalTime())
		if e.wire.on {
			w0, ok := e.wire.find(p.start.Cycle)
			if !ok {
				e.wire.unresolved++
				w0 = e.wire.total(&p.end)
			}
			p.wire = e.wire.total(&p.end) - w0
		}
	}
}

// commit measures the receive of message i (the message the program now
// knows it has; -1 for none) once, and forgets the other pending ones.
func (e *End) commit(i int) {
	s := e.s
	for k := range e.pending {
		p := &e.pending[k]
		if p.msg != i || i < 0 || i >= s.total || !s.msg(i).measured || e.recvDone.has(i) {
			continue
		}
		e.recvDone.add(i)
		si := s.msg(i).sizeIdx
		to := p.end.Cycle
		if s.p.dmaReceive() {
			addSample(&s.recvArrSamp[si], float64(p.end.Cycle-p.start.Cycle), 2*s.p.Messages)
			// Without the wait for the wire: idle cycles, and the span,
			// less the host's idle cycles with the card's engine idle.
			p.end.Idle -= p.wire
			p.end.Cycle -= p.wire
		}
		addSample(&s.recvSamp[si], float64(p.end.Cycle-p.start.Cycle), 2*s.p.Messages)
		e.addReceive(&s.recvLay[si], p.start, p.end)
		s.samples.addSpan(&s.samples.recv, si, p.start, p.end)
		if s.marks.Listened() {
			e.measuredReceive(i, p, to)
		}
	}
	e.pending = e.pending[:0]
}

// Breakdowns returns the series' send and receive latencies by layer,
// each when it has any.
func (s *Series) Breakdowns() []shape.Breakdown {
	var out []shape.Breakdown
	for _, dir := range []string{shape.Send, shape.Receive} {
		b := shape.Breakdown{Protocol: s.info.Name, Direction: dir, SizeName: "size", Unit: "message",
			What: s.SendWhat()}
		if dir == shape.Receive {
			b.What = s.RecvWhat()
		}
		for _, r := range s.rows {
			ls, sum := r.SendLayers, r.Send
			if dir == shape.Receive {
				ls, sum = r.RecvLayers, r.Receive
			}
			if sum.N == 0 && len(ls) == 0 {
				continue // not measured: the run stopped first
			}
			p := shape.Point{Size: r.Size, Layers: slices.Clone(ls)}
			if sum.N > 0 {
				p.Latency = &sum
			}
			b.Points = append(b.Points, p)
		}
		if b.HasLayers() {
			out = append(out, b)
		}
	}
	return out
}

// Table returns the series' rows as a table.
func (s *Series) Table() shape.Table {
	// Duplicate and stale echoes, which only faults make, get columns
	// when there are any.
	faults, unsent := false, false
	for _, u := range s.rows {
		faults = faults || u.Duplicates > 0 || u.Stale > 0
		unsent = unsent || u.NotSent > 0
	}
	send := fmt.Sprintf("inside %s()", s.info.Send)
	if s.p.dmaSend() {
		send = fmt.Sprintf("the host's cycles from %s()'s entry until the message has left host memory (its DMA done, that interrupt handled); thread = the thread's own cycles inside %s()", s.info.Send, s.info.Send)
	}
	send += note(s.info.SendNote)
	recv := fmt.Sprintf("first frame at the card to %s() returning", s.info.Recv)
	if s.p.dmaReceive() {
		recv += " without the wait for the wire; arrival = with it"
	}
	recv += note(s.info.RecvNote)
	t := shape.Table{
		// The title keeps the word it had when a series was called a
		// sweep: reports and the tools that read them name it so.
		Title: fmt.Sprintf("%s echo sweep (cycles; send = %s, receive = %s; both hosts)", s.info.Name, send, recv),
		Columns: []shape.Column{
			{Name: "size", Doc: "the message's size in bytes"},
			{Name: s.info.Unit, Doc: "the packets that carry one message on the wire"},
			{Name: "msgs", Doc: "messages measured: sent and echoed back"},
			{Name: "lost", Doc: "messages sent whose echo never came in time"},
			{Name: "corrupt", Doc: "echoes that came back with wrong bytes"},
		},
	}
	if unsent {
		// A run that stopped before the series ended: the messages it
		// never sent.
		t.Columns = append(t.Columns, shape.Column{Name: "not sent", Doc: "messages the sweep was set to measure and never sent: the run stopped first"})
	}
	if faults {
		t.Columns = append(t.Columns, shape.Column{Name: "dup", Doc: "echoes of a message already answered (dropped)"},
			shape.Column{Name: "stale", Doc: "echoes of a message the client had given up on (dropped)"})
	}
	t.Columns = append(t.Columns, shape.Column{Name: "rtt", Unit: "us", Doc: "the client's mean round trip: from entering the send call to the return of the receive call that brings the echo"})
	const sendG, recvG = "send latency (cycles)", "receive latency (cycles)"
	t.Columns = append(t.Columns,
		shape.Column{Name: "send mean", Group: sendG, Doc: "with min, median and max: the send latency, as the title defines it, over every message measured at both hosts"},
		shape.Column{Name: "min", Group: sendG}, shape.Column{Name: "median", Group: sendG}, shape.Column{Name: "max", Group: sendG})
	if s.p.dmaSend() {
		t.Columns = append(t.Columns, shape.Column{Name: "thread median", Group: sendG, Doc: "the median of the sending thread's own cycles inside the call"})
	}
	t.Columns = append(t.Columns,
		shape.Column{Name: "recv mean", Group: recvG, Doc: "with min, median and max: the receive latency, as the title defines it, over every message measured at both hosts"},
		shape.Column{Name: "min", Group: recvG}, shape.Column{Name: "median", Group: recvG}, shape.Column{Name: "max", Group: recvG})
	if s.p.dmaReceive() {
		t.Columns = append(t.Columns, shape.Column{Name: "arrival median", Group: recvG, Doc: "the median of the whole span from the first frame's arrival, the wait for the rest of the message (the wire and the card) included as DMA"})
	}
	opt := func(x *Summary) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f", x.Median)
	}
	for _, u := range s.rows {
		packets := "-" // not known before the connection is open
		if u.Packets > 0 {
			packets = fmt.Sprint(u.Packets)
		}
		row := []string{fmt.Sprint(u.Size), packets, fmt.Sprint(u.Messages), fmt.Sprint(u.Lost), fmt.Sprint(u.Corrupt)}
		if unsent {
			row = append(row, fmt.Sprint(u.NotSent))
		}
		if faults {
			row = append(row, fmt.Sprint(u.Duplicates), fmt.Sprint(u.Stale))
		}
		// What was not measured (a run that stopped first) is "-", not 0.
		rtt := "-"
		if u.Messages > 0 {
			rtt = fmt.Sprintf("%.1f", u.RTTMicros)
		}
		row = append(row, rtt)
		row = append(row, summaryCells(u.Send)...)
		if s.p.dmaSend() {
			row = append(row, opt(u.SendThread))
		}
		row = append(row, summaryCells(u.Receive)...)
		if s.p.dmaReceive() {
			row = append(row, opt(u.ReceiveArrival))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// note returns a protocol's note for a title, in brackets.
func note(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}

// summaryCells formats a summary as the table's cells: mean, min, median
// and max; "-" each when nothing was measured.
func summaryCells(u Summary) []string {
	out := make([]string, 4)
	for i, v := range []float64{u.Mean, u.Min, u.Median, u.Max} {
		out[i] = "-"
		if u.N > 0 {
			out[i] = fmt.Sprintf("%.0f", v)
		}
	}
	return out
}

// Beside sets two series' median latencies and round trips side by side,
// for the sizes both measured.
func Beside(a, b *Series) shape.Table {
	an, bn := a.info.Name, b.info.Name
	t := shape.Table{
		Title: fmt.Sprintf("%s beside %s (median cycles; round trip in us)", bn, an),
		Columns: []shape.Column{{Name: "size"},
			{Name: an + " send", Group: "send (median cycles)"}, {Name: bn + " send", Group: "send (median cycles)"},
			{Name: an + " recv", Group: "receive (median cycles)"}, {Name: bn + " recv", Group: "receive (median cycles)"},
			{Name: an + " rtt", Group: "round trip (mean us)"}, {Name: bn + " rtt", Group: "round trip (mean us)"}},
	}
	for _, x := range a.rows {
		for _, y := range b.rows {
			if x.Size != y.Size {
				continue
			}
			t.Rows = append(t.Rows, []string{fmt.Sprint(x.Size),
				fmt.Sprintf("%.0f", x.Send.Median), fmt.Sprintf("%.0f", y.Send.Median),
				fmt.Sprintf("%.0f", x.Receive.Median), fmt.Sprintf("%.0f", y.Receive.Median),
				fmt.Sprintf("%.1f", x.RTTMicros), fmt.Sprintf("%.1f", y.RTTMicros)})
		}
	}
	return t
}

// SendWhat says what the send latency counts, for titles.
func (s *Series) SendWhat() string {
	if s.p.dmaSend() {
		return "all of the sending host's cycles from " + s.info.Send + "'s entry until the message has left host memory (its last DMA done and that interrupt handled), the wait for the card as DMA" + note(s.info.SendNote)
	}
	return "the sending thread's cycles inside " + s.info.Send + note(s.info.SendNote)
}

// RecvWhat says what the receive latency counts, for titles.
func (s *Series) RecvWhat() string {
	if s.p.dmaReceive() {
		return "the receiving host's cycles from the first frame's arrival to " + s.info.Recv + " returning, without the time it waited for the wire: idle as DMA only while the card's DMA engine moved data" + note(s.info.RecvNote)
	}
	return "all of the receiving host's cycles from the first frame's arrival to " + s.info.Recv + " returning, the wait for the rest of the message (the wire and the card) as DMA" + note(s.info.RecvNote)
}

// Name returns the series' name in lower case ("udp"): its result
// section's name and the prefix of its threads' names.
func (s *Series) Name() string { return s.name() }

// Info returns the description of the series' protocol.
func (s *Series) Info() Info { return s.info }

// Index returns the schedule index a message's stamp (its first four
// bytes, big-endian) names, -1 when it names none: for a protocol's
// Tracker that reads the stamp.
func (s *Series) Index(stamp uint32) int { return s.index(stamp) }

// KeepSamples makes the series keep every measured message's split by
// layer, which costs an allocation a message: for the medians by layer
// (LayerMedians). Call it before the series starts.
func (s *Series) KeepSamples() { s.samples.keep = true }

// Sampled returns, per size of the schedule, how many messages' splits by
// layer the series kept in direction dir (shape.Send or shape.Receive).
func (s *Series) Sampled(dir string) []int {
	var n []int
	for _, ms := range s.samples.of(dir) {
		n = append(n, len(ms))
	}
	return n
}
