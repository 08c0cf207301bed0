// Package tcp is the workload "tcp": the echo latency series (package
// latency) over TCP, send() and recv() on one connection of stream
// sockets of the simulated kernel's Internet stack, optionally after the
// UDP series on the same hosts (compare_udp). It registers the workload
// and the protocol "tcp" of the comparison (package compare). Layer
// APPL.
package tcp

import (
	"fmt"

	"simkron/card"
	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	"simkron/stack/apps/udp"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

func init() {
	compare.Register(compare.Series[Params]{
		Name:         "tcp",
		Help:         "TCP echo latency through stream sockets over a series of message sizes, optionally after the UDP series on the same hosts (compare_udp)",
		ProtocolHelp: "TCP/IP through send/recv ([workload.tcp]'s nodelay, sndbuf, rcvbuf)",
		Default:      DefaultParams,
		Common:       func(p *Params) *latency.Params { return &p.Params },
		Routed:       true,
		Reads: func(p *Params) []string {
			if p.CompareUDP {
				return []string{"udp"}
			}
			return nil
		},
		Protocol: func(_ workload.Env, p Params) (latency.Protocol, *[2]*latency.Endpoint, error) {
			return Protocol{p}, nil, nil
		},
		Workload: withUDP,
	})
}

// withUDP is the TCP series' workload: the series alone or, when it asks
// for the comparison (compare_udp), after the UDP series of
// [workload.udp] between the same hosts, both on the client's one thread.
// (The compare workload never runs it: it runs the UDP series itself.)
func withUDP(env workload.Env, p Params, tcp *latency.Series) (workload.Workload, error) {
	if !p.CompareUDP {
		return &latency.Runs{Series: []*latency.Series{tcp}}, nil
	}
	u := *env.Params("udp").(*udp.Params)
	u.Client, u.Server = p.Client, p.Server
	us, err := udp.New(env, u)
	if err != nil {
		return nil, fmt.Errorf("compare_udp: %w", err)
	}
	return latency.InTurn(us, tcp), nil
}

// Params configures the TCP series: [workload.tcp].
type Params struct {
	latency.Params
	NoDelay bool     `toml:"nodelay" help:"TCP_NODELAY on both sockets, as request/response programs set it: with Nagle on, a message's last partial segment waits for the ACK of the one before, which the peer delays"`
	SndBuf  sim.Size `toml:"sndbuf" max:"1MiB" help:"SO_SNDBUF of both sockets (0: the stack's tcp_sndbuf)"`
	RcvBuf  sim.Size `toml:"rcvbuf" max:"64KiB" help:"SO_RCVBUF of both sockets (0: the stack's tcp_rcvbuf)"`
	// CompareUDP runs the UDP series first on the same hosts.
	CompareUDP bool `toml:"compare_udp" help:"first run the UDP series of [workload.udp] between the same hosts, for a table of TCP beside UDP"`
}

// DefaultParams measures the sizes of the Linux/SimOS study.
func DefaultParams() Params {
	return Params{
		Params: latency.Params{
			Sizes:    latency.StudySizes(latency.FullFrameTCP),
			Messages: 20, Warmup: 2, Port: 5001, Timeout: 5 * sim.Second, SendSpan: latency.SpanThread,
		},
		NoDelay: true,
	}
}

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if err := p.Params.Validate(); err != nil {
		return err
	}
	if p.SndBuf != 0 && p.SndBuf < sim.KiB || p.RcvBuf != 0 && p.RcvBuf < sim.KiB {
		return fmt.Errorf("sndbuf: socket buffers are 0 (the stack's) or at least 1KiB")
	}
	return nil
}

// Protocol is TCP as a series runs over it: send() and recv() on one
// connection. Both programs know the schedule of sizes, so the server
// reads exactly one message before echoing it: the message boundaries
// are the same in both directions of the stream, and the tracker finds
// a message's first byte by its offset in the stream.
type Protocol struct {
	p Params
}

var _ latency.Protocol = Protocol{}

// Info describes the TCP series.
func (Protocol) Info() latency.Info {
	return latency.Info{Name: "TCP", Send: "send", Recv: "recv", SendSymbol: "sys_send", RecvSymbol: "sys_recv", Unit: "segs",
		Main: cpu.Def{Name: "tcpbench_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number, count received bytes"}}
}

type tcpConn struct {
	s       *inet.Stack
	fd, lfd int
	timeout sim.Time
}

// socket opens a stream socket with the series' options.
func (tr Protocol) socket(t *kernel.Thread, s *inet.Stack) (int, inet.Errno) {
	fd, err := s.Socket(t, inet.SockStream)
	if err != 0 {
		return fd, err
	}
	if tr.p.NoDelay {
		err = s.SetOption(t, fd, inet.OptNoDelay, 1)
	}
	if err == 0 && tr.p.SndBuf > 0 {
		err = s.SetOption(t, fd, inet.OptSndBuf, int(tr.p.SndBuf))
	}
	if err == 0 && tr.p.RcvBuf > 0 {
		err = s.SetOption(t, fd, inet.OptRcvBuf, int(tr.p.RcvBuf))
	}
	return fd, err
}

// Listen listens on the series' port and accepts one connection.
func (tr Protocol) Listen(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	s := e.Host.Inet
	lfd, err := tr.socket(t, s)
	if err == 0 {
		err = s.Bind(t, lfd, tr.p.Port)
	}
	if err == 0 {
		err = s.Listen(t, lfd, 1)
	}
	if err != 0 {
		return nil, fmt.Errorf("listen: %v", err)
	}
	fd, _, _, err := s.Accept(t, lfd)
	if err != 0 {
		return nil, fmt.Errorf("accept: %v", err)
	}
	return &tcpConn{s: s, fd: fd, lfd: lfd, timeout: tr.p.Timeout}, nil
}

// Dial connects to the server.
func (tr Protocol) Dial(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	s := e.Host.Inet
	fd, err := tr.socket(t, s)
	if err == 0 {
		err = s.Connect(t, fd, e.Peer().Host.Inet.Addr(), tr.p.Port)
	}
	if err != 0 {
		return nil, fmt.Errorf("connect: %v", err)
	}
	return &tcpConn{s: s, fd: fd, lfd: -1, timeout: tr.p.Timeout}, nil
}

func (c *tcpConn) Send(t *kernel.Thread, buf memory.Addr, n int) error {
	if _, err := c.s.Send(t, c.fd, buf, n); err != 0 {
		return fmt.Errorf("send: %v", err)
	}
	return nil
}

// Recv reads n bytes, as many recv calls as it takes.
func (c *tcpConn) Recv(t *kernel.Thread, buf memory.Addr, n int, timeout sim.Time) (int, error) {
	if n == 0 {
		return 0, latency.ErrEnd
	}
	for got := 0; got < n; {
		m, err := c.s.Recv(t, c.fd, buf+memory.Addr(got), n-got, timeout)
		if err != 0 || m == 0 {
			what := "end of stream"
			if err != 0 {
				what = err.Error()
			}
			return got, fmt.Errorf("recv after %d of %d bytes: %v", got, n, what)
		}
		got += m
	}
	return n, nil
}

// Unsent reports whether the connection holds bytes it has not sent yet
// (its window or Nagle holding them back): the "dma" send of a message
// lasts until they have gone too. The simulator reads the control block;
// the program is not charged.
func (c *tcpConn) Unsent() bool {
	info, ok := c.s.TCPInfo(c.fd)
	return ok && int32(info.SndUna+uint32(info.Queued)-info.SndMax) > 0
}

func (c *tcpConn) Packets(n int) int {
	info, ok := c.s.TCPInfo(c.fd)
	if !ok {
		return 0
	}
	return (n + info.MSS - 1) / info.MSS
}

func (c *tcpConn) Close(t *kernel.Thread) {
	c.s.Close(t, c.fd)
	if c.lfd >= 0 {
		c.s.Close(t, c.lfd)
	}
}

// Tracker follows the series' connection at e's host: the peer's SYN
// gives the stream's origin, the first segment carrying a message's first
// byte starts its receive latency, and a recv returning completes every
// message the program now has whole.
func (tr Protocol) Tracker(e *latency.End) latency.Tracker {
	return &tcpTracker{e: e, port: tr.p.Port}
}

type tcpTracker struct {
	e       *latency.End
	port    uint16
	irs     uint32 // the peer's initial sequence number
	synSeen bool
	next    int // the message whose first byte is awaited
	started bool
	start   cpu.Account
	out     []latency.Arrival
}

func (k *tcpTracker) Frame(f []byte, now func(*cpu.Account)) {
	ip, ok := k.e.Host.IPv4(f)
	if !ok || ip.Protocol() != header.IPv4ProtocolTCP || ip.Dst() != k.e.Host.Inet.Addr() || ip.FragmentOffset() != 0 {
		return
	}
	seg := header.TCP(ip.Payload())
	// An ATM card's frame may end inside the TCP options (a SYN's MSS,
	// timestamps: 8 + 20 + 20 bytes fill the first cell); the fields used
	// here are in the fixed 20 bytes.
	cut := k.e.Host.Link == card.LLCSNAP && len(seg) >= header.TCPMinimumSize && seg.DataOffset() >= header.TCPMinimumSize
	if !seg.IsValid() && !cut {
		return
	}
	if seg.DstPort() != k.port && seg.SrcPort() != k.port {
		return
	}
	if seg.Flags()&header.TCPFlagSYN != 0 {
		k.irs, k.synSeen = seg.SeqNum(), true
		return
	}
	n := ip.PayloadLength() - seg.DataOffset()
	s := k.e.Series()
	if !k.synSeen || n == 0 || k.started || k.next >= s.Total() {
		return
	}
	first := uint64(seg.SeqNum() - k.irs - 1)
	if m := s.Message(k.next); first <= m.Offset && m.Offset < first+uint64(n) {
		k.started = true
		now(&k.start)
	}
}

// Completed ends every message whose last byte the stream delivered to
// the program reaches.
func (k *tcpTracker) Completed(c *cpu.CPU, _ memory.Addr) []latency.Arrival {
	conn, ok := k.e.Conn().(*tcpConn)
	if !ok {
		return nil
	}
	info, ok := conn.s.TCPInfo(conn.fd)
	if !ok {
		return nil
	}
	delivered := uint64(info.RcvNxt - uint32(info.Unread) - info.IRS - 1)
	s := k.e.Series()
	k.out = k.out[:0]
	for k.next < s.Total() && k.started {
		m := s.Message(k.next)
		if m.Offset+uint64(m.Size) > delivered {
			break
		}
		k.out = append(k.out, latency.Arrival{Msg: k.next, Start: k.start})
		k.next++
		k.started = false
	}
	return k.out
}
