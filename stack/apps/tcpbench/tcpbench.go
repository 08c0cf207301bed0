// Package tcpbench is the UDP latency sweep of the Linux/SimOS study run
// over TCP: a client connects to an echo server on another host and, for
// each message size, sends a message with send() and reads the echo back
// with recv() until all of it has come. Layer APPL.
//
// The measurement is the simulator's, as in udpbench: hooks on sys_send
// and sys_recv and an observer on each card; the programs read no clock.
// The send latency is the sending thread's own cycles inside send() (for a
// message larger than the send buffer that includes the cycles of the
// calls' later rounds, not the time spent waiting for ACKs), split by
// layer. The receive latency runs from the arrival at the card of the
// segment carrying the message's first byte until the recv() that hands
// the program its last byte returns; its split counts every cycle of the
// receiving host in that span by layer (interrupts, softirqs, ACKs sent,
// the woken thread), the core's waiting for the rest of the message
// counted as DMA, and sums to it exactly. Both hosts' sends and receives
// are measured (the server's receive of the request, the client's of the
// echo).
//
// Both programs know the schedule of sizes, so the server reads exactly
// one message before echoing it: the message boundaries are the same in
// both directions of the stream, and the observer finds a message's first
// byte by its offset in the stream.
package tcpbench

import (
	"encoding/binary"
	"fmt"
	"slices"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
)

// Params configures the sweep.
type Params struct {
	Client   string   `toml:"client" help:"host that connects, sends each message and reads the echo"`
	Server   string   `toml:"server" help:"host that accepts and echoes"`
	Sizes    []int    `toml:"sizes" min:"4" max:"1048576" help:"message sizes in bytes"`
	Messages int      `toml:"messages" min:"1" max:"1000000" help:"measured round trips per size"`
	Warmup   int      `toml:"warmup" min:"0" max:"1000" help:"round trips per size before measuring"`
	Port     uint16   `toml:"port" min:"1" help:"server's TCP port"`
	NoDelay  bool     `toml:"nodelay" help:"TCP_NODELAY on both sockets, as request/response programs set it: with Nagle on, a message's last partial segment waits for the ACK of the one before, which the peer delays"`
	SndBuf   sim.Size `toml:"sndbuf" max:"1MiB" help:"SO_SNDBUF of both sockets (0: the stack's tcp_sndbuf)"`
	RcvBuf   sim.Size `toml:"rcvbuf" max:"64KiB" help:"SO_RCVBUF of both sockets (0: the stack's tcp_rcvbuf)"`
	Timeout  sim.Time `toml:"timeout" min:"1ms" help:"how long a program waits in recv before the sweep gives up"`
	// CompareUDP is read by the machine package, which runs the two sweeps.
	CompareUDP bool `toml:"compare_udp" help:"first run the UDP sweep of [workload.udp] between the same hosts, for a table of TCP beside UDP"`
}

// DefaultParams sweeps the sizes of the Linux/SimOS study.
func DefaultParams() Params {
	return Params{
		Sizes:    []int{4, 16, 64, 256, 1024, 1460, 2048, 4096, 8192, 16384, 32768},
		Messages: 20, Warmup: 2, Port: 5001, NoDelay: true, Timeout: 5 * sim.Second,
	}
}

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if p.SndBuf != 0 && p.SndBuf < sim.KiB || p.RcvBuf != 0 && p.RcvBuf < sim.KiB {
		return fmt.Errorf("sndbuf: socket buffers are 0 (the stack's) or at least 1KiB")
	}
	return nil
}

// Host is what the programs need of a host.
type Host = latency.Host

var defMain = cpu.Def{Name: "tcpbench_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number, count received bytes"}

// message is one round trip of the schedule.
type message struct {
	size     int    // index into Params.Sizes
	n        int    // bytes
	off      uint64 // offset of its first byte in either direction's stream
	measured bool
}

// Bench is the sweep across its two hosts.
type Bench struct {
	p        Params
	client   *Host
	server   *Host
	sched    []message
	rows     []latency.Row
	probes   [2]*probe
	sendSamp [][]float64
	recvSamp [][]float64
	sendLay  []latency.Layers
	recvLay  []latency.Layers
	rttSum   []sim.Time
	failed   string
	mainC    *cpu.Symbol
	mainS    *cpu.Symbol
}

// New prepares the sweep; Start spawns the programs.
func New(p Params, client, server *Host) (*Bench, error) {
	if client.Inet == nil || server.Inet == nil {
		return nil, fmt.Errorf("both hosts need an IP address on a card")
	}
	n := len(p.Sizes)
	b := &Bench{p: p, client: client, server: server, rows: make([]latency.Row, n),
		sendSamp: make([][]float64, n), recvSamp: make([][]float64, n),
		sendLay: make([]latency.Layers, n), recvLay: make([]latency.Layers, n),
		rttSum: make([]sim.Time, n)}
	var off uint64
	for si, size := range p.Sizes {
		b.sendLay[si], b.recvLay[si] = latency.Layers{}, latency.Layers{}
		b.rows[si].Size = size
		for i := range p.Warmup + p.Messages {
			b.sched = append(b.sched, message{size: si, n: size, off: off, measured: i >= p.Warmup})
			off += uint64(size)
		}
	}
	b.mainC = client.Kernel.Symbols().Define(defMain)
	b.mainS = server.Kernel.Symbols().Define(defMain)
	for i, h := range []*Host{client, server} {
		b.probes[i] = newProbe(b, h)
	}
	return b, nil
}

// Start spawns the echo server and the client.
func (b *Bench) Start() {
	b.server.Kernel.Spawn("tcpecho", b.Serve)
	b.client.Kernel.Spawn("tcpclient", b.Client)
}

// Rows returns the results once the client has ended.
func (b *Bench) Rows() []latency.Row { return b.rows }

// Failed says why the sweep stopped early ("" when it did not).
func (b *Bench) Failed() string { return b.failed }

func (b *Bench) fail(format string, args ...any) {
	if b.failed == "" {
		b.failed = fmt.Sprintf(format, args...)
	}
}

// socket opens a stream socket with the sweep's options.
func (b *Bench) socket(t *kernel.Thread, s *inet.Stack) (int, inet.Errno) {
	fd, err := s.Socket(t, inet.SockStream)
	if err != 0 {
		return fd, err
	}
	if b.p.NoDelay {
		err = s.SetOption(t, fd, inet.OptNoDelay, 1)
	}
	if err == 0 && b.p.SndBuf > 0 {
		err = s.SetOption(t, fd, inet.OptSndBuf, int(b.p.SndBuf))
	}
	if err == 0 && b.p.RcvBuf > 0 {
		err = s.SetOption(t, fd, inet.OptRcvBuf, int(b.p.RcvBuf))
	}
	return fd, err
}

// recvFull reads n bytes into buf; false when the connection failed.
func (b *Bench) recvFull(t *kernel.Thread, h *Host, fd int, buf memory.Addr, n int) bool {
	for got := 0; got < n; {
		m, err := h.Inet.Recv(t, fd, buf+memory.Addr(got), n-got, b.p.Timeout)
		if err != 0 || m == 0 {
			b.fail("%s: recv after %d of %d bytes: %v", h.Name, got, n, errText(err, m))
			return false
		}
		got += m
	}
	return true
}

func errText(err inet.Errno, m int) string {
	if err == 0 && m == 0 {
		return "end of stream"
	}
	return err.Error()
}

// Serve is the echo server's program, to run on a thread of the server
// host.
func (b *Bench) Serve(t *kernel.Thread) {
	h := b.server
	k := h.Kernel
	c := k.CPU()
	c.Enter(b.mainS)
	defer c.Exit(b.mainS)
	s := h.Inet
	lfd, err := b.socket(t, s)
	if err == 0 {
		err = s.Bind(t, lfd, b.p.Port)
	}
	if err == 0 {
		err = s.Listen(t, lfd, 1)
	}
	if err != 0 {
		b.fail("%s: listen: %v", h.Name, err)
		return
	}
	fd, _, _, err := s.Accept(t, lfd)
	if err != 0 {
		b.fail("%s: accept: %v", h.Name, err)
		return
	}
	b.probes[1].fd = fd
	buf := k.Kmalloc(slices.Max(b.p.Sizes))
	for _, m := range b.sched {
		if !b.recvFull(t, h, fd, buf, m.n) {
			break
		}
		if _, err := s.Send(t, fd, buf, m.n); err != 0 {
			b.fail("%s: send: %v", h.Name, err)
			break
		}
	}
	s.Close(t, fd)
	s.Close(t, lfd)
}

func payloadByte(i int) byte { return byte(i*7 + i>>8 + 1) }

// Client is the client's program, to run on a thread of the client host.
func (b *Bench) Client(t *kernel.Thread) {
	h := b.client
	k := h.Kernel
	c := k.CPU()
	c.Enter(b.mainC)
	defer c.Exit(b.mainC)
	defer b.finish()
	s := h.Inet
	size := slices.Max(b.p.Sizes)
	out, in := k.Kmalloc(size), k.Kmalloc(size)
	pattern := make([]byte, size)
	for i := range pattern {
		pattern[i] = payloadByte(i)
	}
	c.Write(out, pattern)
	fd, err := b.socket(t, s)
	if err == 0 {
		err = s.Connect(t, fd, b.server.Inet.Addr(), b.p.Port)
	}
	if err != 0 {
		b.fail("%s: connect: %v", h.Name, err)
		return
	}
	b.probes[0].fd = fd
	if info, ok := s.TCPInfo(fd); ok {
		for si, n := range b.p.Sizes {
			b.rows[si].Packets = (n + info.MSS - 1) / info.MSS
		}
	}
	got := make([]byte, size)
	for seq, m := range b.sched {
		var stamp [4]byte
		binary.BigEndian.PutUint32(stamp[:], uint32(seq))
		c.Write(out, stamp[:])
		c.Sync()
		start := c.LocalTime()
		if _, err := s.Send(t, fd, out, m.n); err != 0 {
			b.fail("%s: send: %v", h.Name, err)
			break
		}
		if !b.recvFull(t, h, fd, in, m.n) {
			break
		}
		c.Sync()
		if !m.measured {
			continue
		}
		row := &b.rows[m.size]
		row.Messages++
		b.rttSum[m.size] += c.LocalTime() - start
		// The simulator checks the echo; the program is not charged.
		c.System().Phys.Read(in, got[:m.n])
		if binary.BigEndian.Uint32(got[:4]) != uint32(seq) || string(got[4:m.n]) != string(pattern[4:m.n]) {
			row.Corrupt++
		}
	}
	s.Close(t, fd)
}

func (b *Bench) finish() {
	for si := range b.rows {
		r := &b.rows[si]
		r.Send = latency.Summarise(b.sendSamp[si])
		r.Receive = latency.Summarise(b.recvSamp[si])
		if r.Messages > 0 {
			r.RTTMicros = float64(b.rttSum[si]) / float64(r.Messages) / float64(sim.Microsecond)
		}
		r.Lost = b.p.Messages - r.Messages
		r.SendLayers = b.sendLay[si].Means(r.Send.N)
		r.RecvLayers = b.recvLay[si].Means(r.Receive.N)
	}
}

// probe measures one host: its send calls, and each message from the
// card to the recv that completes it.
type probe struct {
	b        *Bench
	h        *Host
	c        *cpu.CPU
	fd       int // the connection's descriptor, once the program has it
	sendSym  *cpu.Symbol
	recvSym  *cpu.Symbol
	sendFrom int64
	sendLay  []cpu.LayerCycles
	sent     int // messages sent so far
	// Receive side: the peer's initial sequence number (from its SYN),
	// the message whose first byte is awaited and when it came.
	irs     uint32
	synSeen bool
	next    int
	started bool
	start   cpu.Account
}

func newProbe(b *Bench, h *Host) *probe {
	pr := &probe{b: b, h: h, c: h.Kernel.CPU(), fd: -1}
	pr.sendSym, _ = h.Kernel.Symbols().Lookup("sys_send")
	pr.recvSym, _ = h.Kernel.Symbols().Lookup("sys_recv")
	latency.Watch(pr.c, func(c *cpu.CPU, s *cpu.Symbol) {
		if s == pr.sendSym {
			x := c.Current()
			pr.sendFrom, pr.sendLay = x.Cycles(), x.LayerCycles()
		}
	}, func(c *cpu.CPU, s *cpu.Symbol) {
		switch s {
		case pr.sendSym:
			pr.sendDone(c)
		case pr.recvSym:
			pr.recvDone(c)
		}
	})
	h.Observe(pr.frame)
	return pr
}

func (pr *probe) sendDone(c *cpu.CPU) {
	b := pr.b
	if pr.sent >= len(b.sched) {
		return
	}
	m := b.sched[pr.sent]
	pr.sent++
	if !m.measured {
		return
	}
	x := c.Current()
	b.sendSamp[m.size] = append(b.sendSamp[m.size], float64(x.Cycles()-pr.sendFrom))
	b.sendLay[m.size].Add(pr.sendLay, x.LayerCycles())
}

// recvDone ends the measurement of every message the program now has
// whole: the stream delivered to it reaches past the message's end.
func (pr *probe) recvDone(c *cpu.CPU) {
	b := pr.b
	info, ok := pr.h.Inet.TCPInfo(pr.fd)
	if !ok {
		return
	}
	delivered := uint64(info.RcvNxt - uint32(info.Unread) - info.IRS - 1)
	for pr.next < len(b.sched) && pr.started {
		m := b.sched[pr.next]
		if m.off+uint64(m.n) > delivered {
			return
		}
		if m.measured {
			end := c.AccountAt(c.LocalTime())
			b.recvSamp[m.size] = append(b.recvSamp[m.size], float64(end.Cycle-pr.start.Cycle))
			b.recvLay[m.size].AddReceive(pr.start, end)
		}
		pr.next++
		pr.started = false
	}
}

// frame watches the segments reaching the host's card for the sweep's
// connection: the peer's SYN gives the stream's origin, and the first
// segment carrying a message's first byte starts its receive latency.
func (pr *probe) frame(f []byte) {
	if len(f) < header.EthernetHeaderLen+header.IPv4MinimumSize || header.Ethernet(f).Type() != header.EtherTypeIPv4 {
		return
	}
	ip := header.IPv4(f[header.EthernetHeaderLen:])
	if !ip.IsValid(len(ip)) || ip.Protocol() != header.IPv4ProtocolTCP || ip.Dst() != pr.h.Inet.Addr() || ip.FragmentOffset() != 0 {
		return
	}
	tcp := header.TCP(ip.Payload())
	if !tcp.IsValid() {
		return
	}
	port := pr.b.p.Port
	if tcp.DstPort() != port && tcp.SrcPort() != port {
		return
	}
	if tcp.Flags()&header.TCPFlagSYN != 0 {
		pr.irs, pr.synSeen = tcp.SeqNum(), true
		return
	}
	n := len(tcp) - tcp.DataOffset()
	if !pr.synSeen || n == 0 || pr.started || pr.next >= len(pr.b.sched) {
		return
	}
	first := uint64(tcp.SeqNum() - pr.irs - 1)
	if m := pr.b.sched[pr.next]; first <= m.off && m.off < first+uint64(n) {
		pr.started = true
		pr.start = pr.c.AccountAt(pr.c.Kernel().Now())
	}
}
