// Package udp is the workload "udp": the echo latency series (package
// latency) over UDP, sendto() and recvfrom() on datagram sockets of the
// simulated kernel's Internet stack, a message per datagram, IP fragments
// on the wire. It registers the workload and the protocol "udp" of
// the comparison (package compare). Layer APPL.
package udp

import (
	"encoding/binary"
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/apps/compare"
	"simkron/stack/apps/latency"
	"simkron/stack/header"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/workload"
)

func init() {
	compare.Register(compare.Series[Params]{
		Name:         "udp",
		Help:         "UDP echo latency through sockets over a series of message sizes: send and receive cycles by layer per size",
		ProtocolHelp: "UDP/IP through sendto/recvfrom",
		Default:      DefaultParams,
		Common:       func(p *Params) *latency.Params { return &p.Params },
		Routed:       true,
		Protocol: func(_ workload.Env, p Params) (latency.Protocol, *[2]*latency.Endpoint, error) {
			return Protocol{p}, nil, nil
		},
	})
}

// New prepares the UDP series of p on its hosts.
func New(env workload.Env, p Params) (*latency.Series, error) {
	hs, err := latency.Pair(env, [2]string{"client", "server"}, [2]string{p.Client, p.Server})
	if err != nil {
		return nil, err
	}
	return latency.NewSeries(p.Params, Protocol{p}, hs[0], hs[1])
}

// Params configures the UDP series: [workload.udp].
type Params struct {
	latency.Params
}

// DefaultParams measures the Linux/SimOS study's sizes with the largest
// datagram one 1500-byte frame carries (1472) as the full frame's size.
func DefaultParams() Params {
	return Params{latency.Params{
		Sizes:    latency.StudySizes(latency.FullFrameUDP),
		Messages: 20, Warmup: 2, Port: 7, Timeout: sim.Second, SendSpan: latency.SpanThread,
	}}
}

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if err := p.Params.Validate(); err != nil {
		return err
	}
	for _, n := range p.Sizes {
		if n > 65507 {
			return fmt.Errorf("sizes: %d is more than a UDP datagram carries (65507)", n)
		}
	}
	return nil
}

// Protocol is UDP as a series runs over it: sendto() and recvfrom() on
// a datagram socket, a message per datagram, IP fragments on the wire.
type Protocol struct {
	p Params
}

var _ latency.Protocol = Protocol{}

// Info describes the UDP series. Its Compat is how the UDP series always
// numbered and stamped its messages.
func (Protocol) Info() latency.Info {
	return latency.Info{Name: "UDP", Send: "sendto", Recv: "recvfrom", SendSymbol: "sys_sendto", RecvSymbol: "sys_recvfrom", Unit: "frags",
		Main:   cpu.Def{Name: "udpbench_main", Layer: cpu.LayerAPPL, Instructions: 40, CodeBytes: 256, Why: "loop over sizes and messages, stamp the sequence number"},
		Compat: latency.Compat{StampOrigin: 1, RestoreStamp: true}}
}

// udpConn is one end's datagram socket; the server answers whoever sent
// the last datagram.
type udpConn struct {
	s       *inet.Stack
	fd      int
	peer    inet.Addr
	port    uint16
	cap     int
	timeout sim.Time
	maxfrag int
}

func (u Protocol) open(t *kernel.Thread, e *latency.End) (*udpConn, error) {
	s := e.Host.Inet
	fd, err := s.Socket(t, inet.SockDgram)
	if err != 0 {
		return nil, fmt.Errorf("socket: %v", err)
	}
	return &udpConn{s: s, fd: fd, cap: u.p.MaxSize(), timeout: u.p.Timeout,
		maxfrag: (s.Params().MTU - header.IPv4MinimumSize) &^ 7}, nil
}

// Listen allocates the server's buffer, then opens and binds its socket.
func (u Protocol) Listen(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	e.Buffer()
	c, err := u.open(t, e)
	if err != nil {
		return nil, err
	}
	if err := c.s.Bind(t, c.fd, u.p.Port); err != 0 {
		return nil, fmt.Errorf("bind: %v", err)
	}
	return c, nil
}

// Dial opens the client's socket, addressed to the server.
func (u Protocol) Dial(t *kernel.Thread, e *latency.End) (latency.Conn, error) {
	c, err := u.open(t, e)
	if err != nil {
		return nil, err
	}
	c.peer, c.port = e.Peer().Host.Inet.Addr(), u.p.Port
	return c, nil
}

func (c *udpConn) Send(t *kernel.Thread, buf memory.Addr, n int) error {
	if _, err := c.s.SendTo(t, c.fd, buf, n, c.peer, c.port); err != 0 {
		return fmt.Errorf("sendto: %v", err)
	}
	return nil
}

func (c *udpConn) Recv(t *kernel.Thread, buf memory.Addr, _ int, timeout sim.Time) (int, error) {
	n, from, port, err := c.s.RecvFrom(t, c.fd, buf, c.cap, timeout)
	switch {
	case err == inet.ETIMEDOUT:
		return 0, latency.ErrTimeout
	case err != 0:
		return 0, fmt.Errorf("recvfrom: %v", err)
	}
	c.peer, c.port = from, port
	return n, nil
}

func (c *udpConn) Packets(n int) int {
	return (n + header.UDPMinimumSize + c.maxfrag - 1) / c.maxfrag
}

func (c *udpConn) Close(t *kernel.Thread) { c.s.Close(t, c.fd) }

// Tracker follows UDP datagrams to or from the series' port at e's host,
// fragments included.
func (u Protocol) Tracker(e *latency.End) latency.Tracker {
	return &udpTracker{e: e, port: u.p.Port, arrivals: map[udpKey]*udpArrival{}, bySeq: map[uint32]*udpArrival{}}
}

type udpTracker struct {
	e        *latency.End
	port     uint16
	arrivals map[udpKey]*udpArrival // by datagram, until its first fragment is in
	bySeq    map[uint32]*udpArrival // by stamp, until a recvfrom returns it
	free     []*udpArrival          // arrivals to reuse
	out      [1]latency.Arrival
}

type udpKey struct {
	src inet.Addr
	id  uint16
}

type udpArrival struct {
	start cpu.Account // the host's counters at the datagram's first frame
	seq   uint32
}

func (u *udpTracker) Frame(f []byte, now func(*cpu.Account)) {
	ip, ok := u.e.Host.IPv4(f)
	if !ok || ip.Protocol() != header.IPv4ProtocolUDP {
		return
	}
	key := udpKey{src: ip.Src(), id: ip.ID()}
	// A datagram in one frame (no fragment of it in yet, none to follow)
	// is its own first and last frame: it needs no entry in arrivals.
	whole := len(u.arrivals) == 0 && ip.FragmentOffset() == 0 && !ip.More()
	var a *udpArrival
	found := false
	if !whole {
		a, found = u.arrivals[key]
	}
	if !found {
		if n := len(u.free); n > 0 {
			a = u.free[n-1]
			u.free = u.free[:n-1]
		} else {
			a = &udpArrival{}
		}
		now(&a.start)
		if !whole {
			u.arrivals[key] = a
		}
	}
	if ip.FragmentOffset() != 0 {
		return
	}
	d := header.UDP(ip.Payload())
	if len(d) >= header.UDPMinimumSize+4 && (d.DstPort() == u.port || d.SrcPort() == u.port) {
		a.seq = binary.BigEndian.Uint32(d[header.UDPMinimumSize:])
		u.bySeq[a.seq] = a
	}
	// The datagram's frames are all in (Linux sends the first fragment
	// last); forget the key so that IDs may wrap.
	if !whole {
		delete(u.arrivals, key)
	}
}

// Completed reads the stamp of the datagram recvfrom put in the program's
// buffer.
func (u *udpTracker) Completed(c *cpu.CPU, buf memory.Addr) []latency.Arrival {
	if buf == 0 {
		return nil
	}
	var stamp [4]byte
	c.System().Phys.Read(buf, stamp[:])
	a, ok := u.bySeq[binary.BigEndian.Uint32(stamp[:])]
	if !ok {
		return nil
	}
	delete(u.bySeq, a.seq)
	// Back to the pool: the caller copies Start before any frame comes.
	u.free = append(u.free, a)
	u.out[0] = latency.Arrival{Msg: u.e.Series().Index(a.seq), Start: a.start}
	return u.out[:]
}
