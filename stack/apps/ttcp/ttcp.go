// Package ttcp is the ttcp bulk-transfer test between two simulated
// hosts: a transmitter connects and writes N buffers of S bytes, a
// receiver reads until the end of the stream. Each run (case) opens a
// fresh connection with its own socket buffer sizes, TCP_NODELAY,
// delayed-ACK setting and interface MTU, so that a config can set
// variants of one transfer side by side. Layer APPL.
//
// Besides throughput, an observer on each card records every segment of
// the connection as it reaches the card: the gaps between data segments
// at the receiver, the sizes sent, and a window of the trace from the
// middle of the transfer show how the connection advances — smoothly, or
// once per delayed-ACK timeout as in the ttcp stall of BSD-derived stacks
// over FDDI. The stack's counters of data held back by the sender (Nagle
// or silly-window avoidance) and of ACKs sent by the delayed-ACK timer
// give the mechanism.
//
// The programs follow ttcp: the receiver reads S bytes at a time; the
// transmitter times from connect to its last write, the receiver from
// accept to the end of the stream (throughput is the receiver's). Between
// runs the transmitter shuts its side and waits for the receiver's close,
// so runs never overlap; the receiver listens on port+i for run i.
//
// The two programs share nothing while the simulation runs, so that a
// run may simulate the two hosts apart (workload.Type.Groups): each side
// keeps its own part of every run (the transmitter its case index, ISNs
// seen, window of each run and its counters; the receiver its bytes,
// times, delayed-ACK timeouts and the data its card saw), and Result,
// once the simulation has stopped, joins them: the run's trace merged by
// time, the gaps, verdicts and graphs. Nothing tells the receiver that
// the transmitter failed, so it gives up waiting for a connection by
// itself once nothing has come from the transmitter for the workload's
// timeout plus TCP's longest backoff (64 s): a run whose transmitter
// failed ends when both programs have, which may be later than the
// failure by up to that much.
package ttcp

import (
	"bytes"
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// Case is one transfer.
type Case struct {
	Name     string   `json:"name" toml:"name" help:"name of the run in reports"`
	Writes   int      `json:"writes" toml:"writes" min:"1" max:"10000000" help:"number of write() calls (ttcp -n)"`
	Size     int      `json:"size" toml:"size" min:"1" max:"1048576" help:"bytes per write and per read (ttcp -l)"`
	SndBuf   sim.Size `json:"sndbuf" toml:"sndbuf" max:"1MiB" help:"transmitter's SO_SNDBUF (ttcp -b); 0: the stack's tcp_sndbuf"`
	RcvBuf   sim.Size `json:"rcvbuf" toml:"rcvbuf" max:"64KiB" help:"receiver's SO_RCVBUF; 0: the stack's tcp_rcvbuf"`
	NoDelay  bool     `json:"nodelay" toml:"nodelay" help:"TCP_NODELAY on the transmitter (ttcp -D): Nagle off"`
	QuickAck bool     `json:"quickack" toml:"quickack" help:"the receiver acknowledges every data segment at once: delayed ACKs off"`
	MTU      int      `json:"mtu" toml:"mtu" min:"0" max:"65535" help:"interface MTU of both hosts for this run, as ifconfig sets it (0: as configured); at most what the cards' drivers carry"`
}

// SetDefaults gives a new [[workload.ttcp.case]] ttcp's BSD-era defaults
// as in the stall report: 1000 writes of 2048 bytes, 8192-byte buffers.
func (c *Case) SetDefaults() {
	*c = Case{Writes: 1000, Size: 2048, SndBuf: 8 * sim.KiB, RcvBuf: 8 * sim.KiB}
}

// Validate checks what the field bounds cannot.
func (c Case) Validate() error {
	if c.SndBuf != 0 && c.SndBuf < sim.KiB {
		return fmt.Errorf("sndbuf: %v: socket buffers are 0 (the stack's) or at least 1KiB", c.SndBuf)
	}
	if c.RcvBuf != 0 && c.RcvBuf < sim.KiB {
		return fmt.Errorf("rcvbuf: %v: socket buffers are 0 (the stack's) or at least 1KiB", c.RcvBuf)
	}
	if c.MTU != 0 && c.MTU < 68 {
		return fmt.Errorf("mtu: %d is below IPv4's minimum of 68", c.MTU)
	}
	return nil
}

// Params configures the runs.
type Params struct {
	Transmitter string   `toml:"transmitter" help:"host that connects and writes (ttcp -t)"`
	Receiver    string   `toml:"receiver" help:"host that accepts and reads (ttcp -r)"`
	Port        uint16   `toml:"port" min:"1" max:"60000" help:"receiver's TCP port for the first run; run i uses port + i"`
	Timeout     sim.Time `toml:"timeout" min:"1ms" help:"longest wait in one read before the run is abandoned; the receiver waits for a connection until nothing has come from the transmitter for this plus TCP's longest backoff (64s)"`
	Pattern     int      `toml:"pattern" min:"0" max:"1000" help:"segments of each run's trace, from the middle of the transfer, to report"`
	Cases       []Case   `toml:"case" nonempty:"true" help:"the runs, in order"`
}

// DefaultParams returns one run with ttcp's defaults.
func DefaultParams() Params {
	var c Case
	c.SetDefaults()
	return Params{Port: 5001, Timeout: 10 * sim.Second, Pattern: 12, Cases: []Case{c}}
}

// Endpoint is what the programs need of a host.
type Endpoint = latency.Endpoint

// SizeCount is how many data segments of one size were sent.
type SizeCount struct {
	Bytes int `json:"bytes"`
	Count int `json:"count"`
}

// Gaps summarises the times between consecutive data segments reaching
// the receiver's card, in milliseconds.
type Gaps struct {
	N        int     `json:"n"`
	MeanMS   float64 `json:"mean_ms"`
	MedianMS float64 `json:"median_ms"`
	MaxMS    float64 `json:"max_ms"`
	// Stalls counts gaps of at least half the delayed-ACK period; StallMS
	// is their sum.
	Stalls  int     `json:"stalls"`
	StallMS float64 `json:"stall_ms"`
	// LossStalls are the stalls that end with data arriving a second
	// time: a segment (or its ACK) was lost and resent.
	LossStalls int `json:"loss_stalls,omitempty"`
}

// TraceEvent is one segment of the connection as it reached a card.
type TraceEvent struct {
	TimeMS  float64 `json:"time_ms"`  // since the run's first data segment
	DeltaMS float64 `json:"delta_ms"` // since the event before
	Dir     string  `json:"dir"`      // "data" (transmitter to receiver) or "ack"
	Seq     uint32  `json:"seq"`      // relative to the sender's initial sequence number
	Len     int     `json:"len"`
	Ack     uint32  `json:"ack"` // relative to the other side's initial sequence number
	Win     int     `json:"win"`
}

// Result is one run's outcome.
type Result struct {
	Case
	IfMTU        int     `json:"if_mtu"` // the interface MTU the run used
	MSS          int     `json:"mss"`    // the transmitter's maximum segment size
	Bytes        int64   `json:"bytes"`
	Corrupt      int64   `json:"corrupt_bytes"` // bytes read that differ from what was written
	Seconds      float64 `json:"seconds"`       // receiver: accept to end of stream
	TxSeconds    float64 `json:"tx_seconds"`    // transmitter: connect to its last write returning
	KBps         float64 `json:"kb_per_s"`      // receiver's throughput, 1024-byte KB per second
	Mbps         float64 `json:"mbit_per_s"`
	DataSegments int     `json:"data_segments"`
	Retransmits  uint64  `json:"retransmits"`
	// Held counts times the transmitter's TCP held back data its window
	// allowed (Nagle, silly-window avoidance); DelAckTimeouts the ACKs the
	// receiver's delayed-ACK timer sent.
	Held           uint64       `json:"held"`
	DelAckTimeouts uint64       `json:"delack_timeouts"`
	Sizes          []SizeCount  `json:"segment_sizes"`
	Gaps           Gaps         `json:"gaps"`
	Verdict        string       `json:"verdict"`
	Why            string       `json:"why"` // the mechanism behind the verdict
	Pattern        []TraceEvent `json:"pattern"`
	// Progress is the transfer's time-sequence graph: the bytes that have
	// reached the receiver's card against time since the first data
	// segment; every segment of the first second, a sample of the rest.
	Progress []Point `json:"progress"`
	Error    string  `json:"error,omitempty"`
}

// Point is one point of a time-sequence graph.
type Point struct {
	Seconds float64 `json:"t_s"`
	Bytes   int64   `json:"bytes"`
}

// progressSamples bounds the points of a graph after its first second.
const progressSamples = 300

var defMain = cpu.Def{Name: "ttcp_main", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256, Why: "loop over the writes or reads, count bytes"}

// Test is the runs across the two hosts. Its two programs share nothing
// while the simulation runs, so that a run may simulate the hosts apart
// (workload.Type.Groups): the transmitter's program and the observer of
// its card write only tx, the receiver's program and its card's observer
// only rx, and both read only what New set and never changes (the
// parameters, the pattern, the two addresses). Result, called once
// the simulation has stopped, puts each run's two halves together.
type Test struct {
	p      Params
	tx     transmitter
	rx     receiver
	rxAddr inet.Addr // where the transmitter connects
	txAddr inet.Addr // where the receiver hears the transmitter from
	delack sim.Time  // the receiver's delayed-ACK period
	// pattern is one period of patternByte, from offset 0, built by New:
	// the transmitter copies a write's bytes out of it and the receiver
	// compares against it, instead of computing every byte.
	pattern []byte
}

// transmitter is the transmitter's side: its program's state and its
// card's observer's.
type transmitter struct {
	h    *Endpoint
	main *cpu.Symbol
	cur  int // the run in progress; len(Cases) once the program has ended
	runs []txRun
}

// txRun is what the transmitter knows of one run.
type txRun struct {
	// started says that the transmitter began the run, at from (run 0:
	// from the beginning); done that it finished it, at to. [from, to]
	// is the run's window: the segments of its connection that reach
	// either card within it are the run's trace.
	started, done     bool
	from, to          sim.Time
	ifMTU, mss        int
	seconds           float64 // connect to the last write's return
	retransmits, held uint64
	err               failure
	peerISN           uint32     // the receiver's initial sequence number, from its SYN+ACK
	acks              []rawEvent // the receiver's segments at the transmitter's card, as they came
}

// receiver is the receiver's side: its program's state and its card's
// observer's.
type receiver struct {
	h    *Endpoint
	main *cpu.Symbol
	runs []rxRun
	// heard is when a segment from the transmitter last reached the
	// card: the transmitter is still at work, and the receiver waits on
	// for its connection.
	heard sim.Time
}

// rxRun is what the receiver knows of one run.
type rxRun struct {
	bytes, corrupt int64
	seconds        float64 // accept to the end of the stream
	delAcks        uint64  // ACKs its delayed-ACK timer sent from its accept to its close
	err            failure
	peerISN        uint32 // the transmitter's initial sequence number, from its SYN
	// data is the transmitter's data segments at the receiver's card, as
	// they came, to the run's port at any time: which are the run's is
	// the transmitter's to say (its window), once the simulation is over.
	data []rawEvent
}

// failure is one side's first failure in a run: what, and when by its
// host's clock. waited marks the receiver's giving up on a connection
// that never came, which a failure of the transmitter explains.
type failure struct {
	msg    string
	at     sim.Time
	waited bool
}

// rawEvent is a segment at a card, with its sequence and acknowledgement
// numbers as they were on the wire.
type rawEvent struct {
	at       sim.Time
	data     bool
	seq, ack uint32
	n, win   int
}

// New prepares the runs; Start spawns the programs.
func New(p Params, tx, rx *Endpoint) (*Test, error) {
	if tx.Inet == nil || rx.Inet == nil {
		return nil, fmt.Errorf("both hosts need an IP address on a card")
	}
	if len(p.Cases) == 0 {
		return nil, fmt.Errorf("case: no runs")
	}
	for i, c := range p.Cases {
		for _, h := range []*Endpoint{tx, rx} {
			if c.MTU > h.Inet.DeviceMTU() {
				return nil, fmt.Errorf("case[%d].mtu: %d is more than host %s's card carries (%d)", i, c.MTU, h.Name, h.Inet.DeviceMTU())
			}
		}
	}
	t := &Test{p: p, rxAddr: rx.Inet.Addr(), txAddr: tx.Inet.Addr(), delack: rx.Inet.Params().TCPDelAck, pattern: make([]byte, patternPeriod)}
	for i := range t.pattern {
		t.pattern[i] = patternByte(int64(i))
	}
	t.tx = transmitter{h: tx, main: tx.Kernel.Symbols().Define(defMain), runs: make([]txRun, len(p.Cases))}
	t.rx = receiver{h: rx, main: rx.Kernel.Symbols().Define(defMain), runs: make([]rxRun, len(p.Cases))}
	tx.Received.Connect(t.txFrame)
	rx.Received.Connect(t.rxFrame)
	return t, nil
}

// Start spawns the receiver and the transmitter.
func (t *Test) Start() {
	t.rx.h.Kernel.Spawn("ttcp-r", t.receive)
	t.tx.h.Kernel.Spawn("ttcp-t", t.transmit)
}

// now is h's scheduler's time: when a program or an observer of h acts.
func now(h *Endpoint) sim.Time { return h.Kernel.CPU().Scheduler().Now() }

// fail records the transmitter's failure in run i, unless it has one.
func (x *transmitter) fail(i int, format string, args ...any) {
	if x.runs[i].err.msg == "" {
		x.runs[i].err = failure{msg: fmt.Sprintf(format, args...), at: now(x.h)}
	}
}

// fail records the receiver's failure in run i, unless it has one;
// waited says that it gave up waiting for the connection.
func (x *receiver) fail(i int, waited bool, format string, args ...any) {
	if x.runs[i].err.msg == "" {
		x.runs[i].err = failure{msg: fmt.Sprintf(format, args...), at: now(x.h), waited: waited}
	}
}

func patternByte(i int64) byte { return byte(i*13 + i>>9 + 7) }

// patternPeriod is patternByte's period: 13*i repeats every 256 bytes and
// i>>9 every 256 blocks of 512, as a byte.
const patternPeriod = 256 * 512

// patternAt returns the pattern's bytes from offset off up to the end of
// its period.
func (t *Test) patternAt(off int64) []byte { return t.pattern[off%patternPeriod:] }

// fillPattern puts the pattern's bytes from offset off in dst.
func (t *Test) fillPattern(dst []byte, off int64) {
	for len(dst) > 0 {
		n := copy(dst, t.patternAt(off))
		dst, off = dst[n:], off+int64(n)
	}
}

// corrupt counts the bytes of got that differ from the pattern's from
// offset off.
func (t *Test) corrupt(got []byte, off int64) int64 {
	var bad int64
	for len(got) > 0 {
		want := t.patternAt(off)
		n := min(len(got), len(want))
		if !bytes.Equal(got[:n], want[:n]) {
			for j := range n {
				if got[j] != want[j] {
					bad++
				}
			}
		}
		got, off = got[n:], off+int64(n)
	}
	return bad
}

// listen opens run i's listening socket with its receive buffer and
// interface MTU.
func (t *Test) listen(th *kernel.Thread, i int) int {
	x := &t.rx
	s, c := x.h.Inet, t.p.Cases[i]
	if err := t.setMTU(x.h, c); err != nil {
		x.fail(i, false, "%s: %v", x.h.Name, err)
		return -1
	}
	fd, err := s.Socket(th, inet.SockStream)
	if err == 0 && c.RcvBuf > 0 {
		err = s.SetOption(th, fd, inet.OptRcvBuf, int(c.RcvBuf))
	}
	if err == 0 && c.QuickAck {
		err = s.SetOption(th, fd, inet.OptQuickAck, 1)
	}
	if err == 0 {
		err = s.Bind(th, fd, t.p.Port+uint16(i))
	}
	if err == 0 {
		err = s.Listen(th, fd, 1)
	}
	if err != 0 {
		x.fail(i, false, "%s: listen: %v", x.h.Name, err)
		return -1
	}
	return fd
}

// setMTU sets h's interface MTU for run c (its configured MTU when 0).
func (t *Test) setMTU(h *Endpoint, c Case) error {
	mtu := c.MTU
	if mtu == 0 {
		mtu = h.Inet.ConfiguredMTU()
	}
	return h.Inet.SetMTU(mtu)
}

// receive is the receiver's program.
func (t *Test) receive(th *kernel.Thread) {
	x := &t.rx
	h := x.h
	k := h.Kernel
	cp := k.CPU()
	cp.Enter(x.main)
	defer cp.Exit(x.main)
	s := h.Inet
	buf := k.Kmalloc(t.maxSize())
	got := make([]byte, t.maxSize())
	lfd := t.listen(th, 0)
	for i := range t.p.Cases {
		c := t.p.Cases[i]
		r := &x.runs[i]
		if lfd < 0 {
			return
		}
		before := s.Stats().TCPDelAckTimeouts
		fd, err := t.accept(th, lfd)
		s.Close(th, lfd)
		if err != 0 {
			x.fail(i, err == inet.ETIMEDOUT, "%s: accept: %v", h.Name, err)
			return
		}
		start := cp.LocalTime()
		var off int64
		for {
			n, err := s.Recv(th, fd, buf, c.Size, t.p.Timeout)
			if err != 0 {
				x.fail(i, false, "%s: recv after %d bytes: %v", h.Name, off, err)
				break
			}
			if n == 0 {
				break
			}
			// The simulator checks the bytes; the program is not charged.
			cp.System().Phys.Read(buf, got[:n])
			r.corrupt += t.corrupt(got[:n], off)
			off += int64(n)
		}
		cp.Sync()
		r.bytes = off
		r.seconds = float64(cp.LocalTime()-start) / float64(sim.Second)
		// The next run's listener is up before this connection closes,
		// which is what the transmitter waits for.
		if i+1 < len(t.p.Cases) {
			lfd = t.listen(th, i+1)
		}
		s.Close(th, fd)
		r.delAcks = s.Stats().TCPDelAckTimeouts - before
	}
}

// accept waits for a run's connection on lfd as long as the transmitter
// may still be at work: it gives up (ETIMEDOUT) once nothing has reached
// the card from the transmitter for the workload's timeout plus the
// longest a TCP that is still trying stays silent (inet.TCPMaxRTO, the
// backoff ceiling that paces its SYNs and the data it sends again). A
// transmitter that failed never connects, and the receiver, which cannot
// know that, ends by itself; one resending an earlier run's data, or its
// SYN, or waiting up to the timeout for the receiver's close, is waited
// for.
func (t *Test) accept(th *kernel.Thread, lfd int) (int, inet.Errno) {
	x := &t.rx
	s, cp := x.h.Inet, x.h.Kernel.CPU()
	quiet := t.p.Timeout + inet.TCPMaxRTO
	deadline := cp.LocalTime() + quiet
	for {
		fd, _, _, err := s.AcceptTimeout(th, lfd, deadline-cp.LocalTime())
		if err != inet.ETIMEDOUT {
			return fd, err
		}
		if deadline = x.heard + quiet; deadline <= cp.LocalTime() {
			return fd, err
		}
	}
}

func (t *Test) maxSize() int {
	n := 0
	for _, c := range t.p.Cases {
		n = max(n, c.Size)
	}
	return n
}

// transmit is the transmitter's program.
func (t *Test) transmit(th *kernel.Thread) {
	x := &t.tx
	h := x.h
	k := h.Kernel
	cp := k.CPU()
	cp.Enter(x.main)
	defer cp.Exit(x.main)
	// No run is current once the program has ended: its card's observer
	// stops.
	defer func() { x.cur = len(t.p.Cases) }()
	s := h.Inet
	size := t.maxSize()
	// Each write's bytes are put in the buffer before it is sent.
	buf := k.Kmalloc(size)
	pat := make([]byte, size)
	rbuf := k.Kmalloc(64)
	for i, c := range t.p.Cases {
		x.cur = i
		r := &x.runs[i]
		r.started = true
		if i > 0 {
			r.from = now(h)
		}
		if err := t.setMTU(h, c); err != nil {
			x.fail(i, "%s: %v", h.Name, err)
			return
		}
		r.ifMTU = s.Params().MTU
		before := s.Stats()
		fd, err := t.connect(th, i)
		if err != 0 {
			x.fail(i, "%s: connect: %v", h.Name, err)
			return
		}
		if info, ok := s.TCPInfo(fd); ok {
			r.mss = info.MSS
		}
		cp.Sync()
		start := cp.LocalTime()
		var off int64
		for w := 0; w < c.Writes; w++ {
			t.fillPattern(pat[:c.Size], off)
			cp.System().Phys.Write(buf, pat[:c.Size]) // the simulator fills the buffer, uncharged
			n, err := s.Send(th, fd, buf, c.Size)
			off += int64(n)
			if err != 0 {
				x.fail(i, "%s: send after %d bytes: %v", h.Name, off, err)
				break
			}
		}
		cp.Sync()
		r.seconds = float64(cp.LocalTime()-start) / float64(sim.Second)
		// Shut our side and wait for the receiver to close: the run is over.
		s.Shutdown(th, fd, inet.ShutWr)
		for {
			n, err := s.Recv(th, fd, rbuf, 64, t.p.Timeout)
			if err != 0 || n == 0 {
				break
			}
		}
		s.Close(th, fd)
		after := s.Stats()
		r.retransmits = after.TCPRetransSegs - before.TCPRetransSegs
		r.held = after.TCPSendHeld - before.TCPSendHeld
		r.done, r.to = true, now(h)
	}
}

// connect opens run i's connection with its options. ttcp -t started
// before ttcp -r is refused: it tries again shortly, up to 50 times.
func (t *Test) connect(th *kernel.Thread, i int) (int, inet.Errno) {
	s, c := t.tx.h.Inet, t.p.Cases[i]
	for try := 0; ; try++ {
		fd, err := s.Socket(th, inet.SockStream)
		if err == 0 && c.SndBuf > 0 {
			err = s.SetOption(th, fd, inet.OptSndBuf, int(c.SndBuf))
		}
		if err == 0 && c.NoDelay {
			err = s.SetOption(th, fd, inet.OptNoDelay, 1)
		}
		if err == 0 {
			err = s.Connect(th, fd, t.rxAddr, t.p.Port+uint16(i))
		}
		if err != inet.ECONNREFUSED || try == 50 {
			return fd, err
		}
		s.Close(th, fd)
		th.SleepFor(20 * sim.Millisecond)
	}
}

// segment returns the TCP segment of frame f that reached h's card
// addressed to h, if it is one (an IPv4 packet's first fragment), with
// its source address and its bytes of data.
func segment(h *Endpoint, f []byte) (tcp header.TCP, src inet.Addr, n int, ok bool) {
	ip, ok := h.IPv4(f)
	if !ok || ip.Protocol() != header.IPv4ProtocolTCP || ip.FragmentOffset() != 0 {
		return nil, src, 0, false
	}
	if ip.Dst() != h.Inet.Addr() {
		return nil, src, 0, false
	}
	tcp = header.TCP(ip.Payload())
	if !tcp.IsValid() {
		return nil, src, 0, false
	}
	return tcp, ip.Src(), ip.PayloadLength() - tcp.DataOffset(), true
}

// txFrame records a segment of the current run's connection reaching the
// transmitter's card: the receiver's SYN+ACK (its initial sequence
// number) and ACKs.
func (t *Test) txFrame(f []byte) {
	x := &t.tx
	if x.cur >= len(t.p.Cases) {
		return
	}
	tcp, _, n, ok := segment(x.h, f)
	if !ok || tcp.SrcPort() != t.p.Port+uint16(x.cur) {
		return
	}
	r := &x.runs[x.cur]
	if tcp.Flags()&header.TCPFlagSYN != 0 {
		r.peerISN = tcp.SeqNum()
		return
	}
	if tcp.Flags()&header.TCPFlagACK == 0 {
		return
	}
	r.acks = append(r.acks, rawEvent{at: now(x.h), seq: tcp.SeqNum(), ack: tcp.AckNum(), n: n, win: int(tcp.Window())})
}

// rxFrame records a segment reaching the receiver's card for a run's
// port: the transmitter's SYN (its initial sequence number) and data;
// and when the transmitter was last heard from.
func (t *Test) rxFrame(f []byte) {
	x := &t.rx
	tcp, src, n, ok := segment(x.h, f)
	if !ok {
		return
	}
	if src == t.txAddr {
		x.heard = now(x.h)
	}
	i := int(tcp.DstPort()) - int(t.p.Port)
	if i < 0 || i >= len(t.p.Cases) {
		return
	}
	r := &x.runs[i]
	if tcp.Flags()&header.TCPFlagSYN != 0 {
		r.peerISN = tcp.SeqNum()
		return
	}
	if n == 0 {
		return // the transmitter's pure ACKs
	}
	r.data = append(r.data, rawEvent{at: now(x.h), data: true, seq: tcp.SeqNum(), ack: tcp.AckNum(), n: n, win: int(tcp.Window())})
}

// results puts each run's two halves together. A run the transmitter
// did not finish (it failed to connect, or the simulation stopped first)
// has no summary, only what each side measured.
func (t *Test) results() []Result {
	out := make([]Result, len(t.p.Cases))
	for i, c := range t.p.Cases {
		tx, rx := &t.tx.runs[i], &t.rx.runs[i]
		r := &out[i]
		r.Case = c
		r.IfMTU, r.MSS, r.TxSeconds = tx.ifMTU, tx.mss, tx.seconds
		r.Bytes, r.Corrupt, r.Seconds = rx.bytes, rx.corrupt, rx.seconds
		r.Error = firstError(tx, rx)
		if tx.done {
			r.Retransmits, r.Held, r.DelAckTimeouts = tx.retransmits, tx.held, rx.delAcks
			t.summarise(r, runTrace(tx, rx))
		}
	}
	return out
}

// firstError is a run's failure: the earlier of the two sides' first
// failures (the transmitter's when both are at the same instant). The
// receiver's giving up on a connection is reported only when the
// transmitter began the run and reported nothing: otherwise the
// transmitter's own failure, or one in an earlier run, is the reason.
func firstError(tx *txRun, rx *rxRun) string {
	f := tx.err
	switch {
	case rx.err.msg == "":
	case rx.err.waited && (f.msg != "" || !tx.started):
	case f.msg == "" || rx.err.at < f.at:
		f = rx.err
	}
	return f.msg
}

// runTrace returns a run's segments as they reached the two cards, in
// time order, their sequence and acknowledgement numbers relative to
// each side's initial one: the receiver's data segments within the
// run's window, merged with the transmitter's ACKs, each side's in its
// own order. The rule for equal times: a data segment that reached the
// receiver's card at the same picosecond as an ACK reached the
// transmitter's comes first, and a segment at the same picosecond as the
// window's start or end is in it (the two hosts' events at one instant
// have no order between them once the hosts are simulated apart; on one
// segment of Ethernet, or any network where a frame takes time, two
// frames reaching two cards at the same picosecond are rare).
func runTrace(tx *txRun, rx *rxRun) []rawEvent {
	out := make([]rawEvent, 0, len(tx.acks)+len(rx.data))
	ack := func(ev rawEvent) rawEvent {
		ev.seq -= tx.peerISN + 1
		ev.ack -= rx.peerISN + 1
		return ev
	}
	j := 0
	for _, ev := range rx.data {
		if ev.at < tx.from || ev.at > tx.to {
			continue
		}
		for ; j < len(tx.acks) && tx.acks[j].at < ev.at; j++ {
			out = append(out, ack(tx.acks[j]))
		}
		ev.seq -= rx.peerISN + 1
		ev.ack -= tx.peerISN + 1
		out = append(out, ev)
	}
	for _, ev := range tx.acks[j:] {
		out = append(out, ack(ev))
	}
	return out
}

// summarise turns a run's trace into its summary.
func (t *Test) summarise(r *Result, trace []rawEvent) {
	if r.Seconds > 0 {
		r.KBps = float64(r.Bytes) / 1024 / r.Seconds
		r.Mbps = float64(r.Bytes) * 8 / 1e6 / r.Seconds
	}
	sizes := map[int]int{}
	var gaps []gap
	var last sim.Time
	var high int64 // the end of the highest data seen
	first := -1
	for j, ev := range trace {
		if !ev.data {
			continue
		}
		end := int64(ev.seq) + int64(ev.n)
		if first < 0 {
			first = j
		} else {
			gaps = append(gaps, gap{ms: float64(ev.at-last) / float64(sim.Millisecond), resent: end <= high})
		}
		high = max(high, end)
		last = ev.at
		r.DataSegments++
		sizes[ev.n]++
	}
	for n, c := range sizes {
		r.Sizes = append(r.Sizes, SizeCount{Bytes: n, Count: c})
	}
	slices.SortFunc(r.Sizes, func(a, b SizeCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return a.Bytes - b.Bytes
	})
	r.Gaps = gapStats(gaps, float64(t.delack)/float64(sim.Millisecond)/2)
	r.Progress = progress(trace)
	delackMS := float64(t.delack) / float64(sim.Millisecond)
	r.Verdict = verdict(r, delackMS)
	r.Why = explain(r, t.bufSize(r.SndBuf, t.tx.h.Inet.Params().TCPSendBuffer), t.bufSize(r.RcvBuf, t.rx.h.Inet.Params().TCPRecvBuffer), delackMS)
	if first < 0 || t.p.Pattern == 0 {
		return
	}
	// A window from the middle of the transfer: the steady state.
	from := first + (len(trace)-first)/2
	for from > first && !trace[from].data {
		from--
	}
	t0 := trace[first].at
	prev := trace[from].at
	for _, ev := range trace[from:min(len(trace), from+t.p.Pattern)] {
		dir := "ack"
		if ev.data {
			dir = "data"
		}
		r.Pattern = append(r.Pattern, TraceEvent{
			TimeMS: float64(ev.at-t0) / float64(sim.Millisecond), DeltaMS: float64(ev.at-prev) / float64(sim.Millisecond),
			Dir: dir, Seq: ev.seq, Len: ev.n, Ack: ev.ack, Win: ev.win})
		prev = ev.at
	}
}

// progress returns the time-sequence graph of a run's trace.
func progress(trace []rawEvent) []Point {
	var data []rawEvent
	for _, ev := range trace {
		if ev.data {
			data = append(data, ev)
		}
	}
	if len(data) == 0 {
		return nil
	}
	t0 := data[0].at
	late := 0
	for _, ev := range data {
		if ev.at-t0 > sim.Second {
			late++
		}
	}
	step := max(1, (late+progressSamples-1)/progressSamples)
	var out []Point
	var high int64
	n := 0
	for i, ev := range data {
		high = max(high, int64(ev.seq)+int64(ev.n))
		if ev.at-t0 > sim.Second {
			n++
			if n%step != 0 && i != len(data)-1 {
				continue
			}
		}
		out = append(out, Point{Seconds: float64(ev.at-t0) / float64(sim.Second), Bytes: high})
	}
	return out
}

// gap is the time between two data segments at the receiver, and
// whether the second one resent data that had arrived before it (the gap
// was a loss's recovery).
type gap struct {
	ms     float64
	resent bool
}

func gapStats(gaps []gap, stall float64) Gaps {
	if len(gaps) == 0 {
		return Gaps{}
	}
	s := make([]float64, len(gaps))
	g := Gaps{N: len(s)}
	for i, x := range gaps {
		s[i] = x.ms
		if x.ms >= stall && x.resent {
			g.LossStalls++
		}
	}
	slices.Sort(s)
	g.MedianMS, g.MaxMS = s[len(s)/2], s[len(s)-1]
	var sum float64
	for _, x := range s {
		sum += x
		if x >= stall {
			g.Stalls++
			g.StallMS += x
		}
	}
	g.MeanMS = sum / float64(len(s))
	return g
}

// stalled reports whether r spent most of its time in gaps of at least
// half the delayed-ACK period.
func stalled(r *Result) bool {
	return r.Gaps.Stalls > 0 && r.Gaps.StallMS > r.Seconds*1000/2
}

// lossStalled reports whether most of r's stalls ended with a resent
// segment: loss recovery, not the delayed-ACK timer, made them.
func lossStalled(r *Result) bool { return r.Gaps.LossStalls*2 > r.Gaps.Stalls }

// verdict says in words how the run advanced, from its measurements.
func verdict(r *Result, delackMS float64) string {
	if r.Error != "" {
		return "failed: " + r.Error
	}
	total := r.Seconds * 1000
	if stalled(r) && lossStalled(r) {
		return fmt.Sprintf("STALLED by losses: %d gaps of at least %.0f ms hold %.0f%% of the time, %d of them ended by data resent "+
			"(%d retransmissions in all)", r.Gaps.Stalls, delackMS/2, 100*r.Gaps.StallMS/total, r.Gaps.LossStalls, r.Retransmits)
	}
	if stalled(r) {
		per := float64(r.Bytes) / float64(r.Gaps.Stalls+1)
		return fmt.Sprintf("STALLED: %d gaps of at least %.0f ms hold %.0f%% of the time; about %.0f bytes move per gap, "+
			"the transmitter held data back %d times and the receiver's delayed-ACK timer sent %d ACKs",
			r.Gaps.Stalls, delackMS/2, 100*r.Gaps.StallMS/total, per, r.Held, r.DelAckTimeouts)
	}
	return fmt.Sprintf("streaming: %d of %d gaps reach %.0f ms (median gap %.2f ms); held back %d times, %d delayed-ACK timeouts",
		r.Gaps.Stalls, r.Gaps.N, delackMS/2, r.Gaps.MedianMS, r.Held, r.DelAckTimeouts)
}

// bufSize is a run's socket buffer: its own size, or the stack's.
func (t *Test) bufSize(own, stack sim.Size) int {
	if own > 0 {
		return int(own)
	}
	return int(stack)
}

// explain gives the mechanism behind a run's outcome, by the BSD sender
// and receiver rules (inet-notes section 5): the sender holds a segment
// shorter than the MSS while data is unacknowledged (Nagle); the receiver
// announces a window that a read opened by 2·MSS or by half its buffer at
// once, and otherwise acknowledges at the delayed-ACK timer.
func explain(r *Result, sndbuf, rcvbuf int, delackMS float64) string {
	m := r.MSS
	switch {
	case r.Error != "" || m == 0:
		return ""
	case stalled(r) && lossStalled(r):
		return fmt.Sprintf("segments or their ACKs were lost on the wire: %d of the %d stalls end with data resent, after the "+
			"retransmission timeout or three duplicate ACKs (%d retransmissions); the BSD sender and receiver rules do not explain them", r.Gaps.LossStalls, r.Gaps.Stalls, r.Retransmits)
	case stalled(r):
		per := float64(r.Bytes) / float64(r.Gaps.Stalls+1)
		return fmt.Sprintf("about %.0f bytes arrive per period: less than 2·MSS (%d) and half the receive buffer (%d), so reading them "+
			"sends no window update and the ACK waits for the %.0f ms delayed-ACK timer; meanwhile the sender holds back its "+
			"last %d-byte write, shorter than the MSS (%d) with data unacknowledged (Nagle), and its %d-byte send buffer is full",
			per, 2*m, rcvbuf/2, delackMS, r.Size, m, sndbuf)
	case r.QuickAck:
		return "delayed ACKs are off: every segment is acknowledged at once, so data Nagle holds back waits one round trip, never the timer"
	case r.NoDelay:
		return fmt.Sprintf("TCP_NODELAY: each write leaves as it comes (held back %d times), so the receiver gets whole %d-byte buffers, "+
			"at least 2·MSS (%d) or half its buffer (%d), and its window update acknowledges them at once", r.Held, sndbuf, 2*m, rcvbuf/2)
	case sndbuf >= 2*m+r.Size:
		return fmt.Sprintf("the %d-byte send buffer holds 2·MSS (%d) and one more write: full %d-byte segments keep leaving, and every two "+
			"of them open the receiver's window by 2·MSS, which it announces at once", sndbuf, 2*m, m)
	}
	return fmt.Sprintf("with an MSS of %d, one send buffer (%d bytes) covers 2·MSS (%d): reading that much opens the receiver's window "+
		"enough to announce at once, so ACKs come within a round trip and Nagle's holds are short", m, sndbuf, 2*m)
}
