// Package serve is the workload of a session with real hosts: the
// simulated hosts run echo servers (RFC 862) over UDP, TCP and, on a host
// with the ISO family, TP4, for whatever reaches them, until the run
// ends: at the workload's duration, or, without one, when the run is
// stopped (Ctrl-C or SIGTERM in simkron run, which then ends it
// complete). It is meant for a segment bridged to a TAP device
// ([[segment.bridge]]), where real hosts are the clients; a simulated
// host may be a client too. Layer APPL.
//
// The servers: one thread answers every UDP datagram to the port with
// the same bytes to its sender; one thread accepts TCP connections and
// gives each a thread of its own that sends back what it reads until the
// peer closes; one thread accepts TP4 connections on the TSAP (two
// octets, as the tp4 workload's port) and gives each a thread that sends
// back every TSDU whole. A failure of one connection (a reset) is
// counted, not a failure of the run; a server that cannot start (the
// port taken) fails the run.
//
// Simplifications: the servers never end by themselves: the run stops at
// the duration (or stop_at, or a signal) and unwinds them, so a
// connection still open then is counted open, its last bytes perhaps not
// echoed; a TSDU longer than the server's buffer (64 KiB) is echoed in
// pieces of the buffer's size.
package serve

import (
	"encoding/binary"
	"fmt"
	"slices"

	"simkron/config"
	"simkron/cpu"
	"simkron/memory"
	"simkron/report/shape"
	"simkron/sim"
	"simkron/stack/inet"
	"simkron/stack/kernel"
	"simkron/stack/osi/netiso"
	"simkron/workload"
)

func init() {
	workload.Register(workload.Type{
		Name:   "serve",
		Help:   "echo servers (UDP, TCP, TP4) on the simulated hosts for real hosts on a bridged segment, until the duration or Ctrl-C",
		Params: func() any { p := DefaultParams(); return &p },
		Hosts: func(params any) []workload.HostRef {
			var refs []workload.HostRef
			for i, h := range params.(*Params).Hosts {
				refs = append(refs, workload.HostRef{Key: fmt.Sprintf("hosts[%d]", i), Name: h})
			}
			return refs
		},
		New: func(env workload.Env, params any) (workload.Workload, error) { return New(env, *params.(*Params)) },
	})
}

// Params configures the servers: [workload.serve].
type Params struct {
	Hosts    []string `toml:"hosts" help:"hosts that run the servers (empty: every host with an IP address or the ISO family)"`
	Duration sim.Time `toml:"duration" help:"how long the servers run, after which the run ends complete; 0: until the run is stopped (Ctrl-C, SIGTERM), which then ends it complete"`
	UDPPort  uint16   `toml:"udp_port" help:"UDP echo port (RFC 862: 7); 0: no UDP server"`
	TCPPort  uint16   `toml:"tcp_port" help:"TCP echo port; 0: no TCP server; not udp_port: the simulated stack keeps one port space for UDP and TCP"`
	TP4Port  uint16   `toml:"tp4_port" help:"TSAP selector of the TP4 echo server, as two octets (the tp4 workload's port); 0: no TP4 server; only on hosts with the ISO family"`
	Backlog  int      `toml:"backlog" min:"1" max:"128" help:"connections a listener holds before they are accepted"`
}

// DefaultParams serves until stopped: UDP and TP4 on the echo port, 7
// (RFC 862), TCP on 5007, as the simulated stack keeps one port space for
// UDP and TCP (a simplification of stack/inet).
func DefaultParams() Params { return Params{UDPPort: 7, TCPPort: 5007, TP4Port: 7, Backlog: 8} }

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if p.UDPPort != 0 && p.UDPPort == p.TCPPort {
		return config.Fieldf("tcp_port", "%d is udp_port too: the simulated stack keeps one port space for UDP and TCP, so the two servers need different ports", p.TCPPort)
	}
	if p.UDPPort == 0 && p.TCPPort == 0 && p.TP4Port == 0 {
		return config.Fieldf("udp_port", "udp_port, tcp_port and tp4_port are all 0: there is nothing to serve")
	}
	return nil
}

// Buffer sizes: a whole UDP datagram (65507 bytes of data at most), a
// TCP read, a TSDU's piece.
const (
	udpBuffer = 65536
	tcpBuffer = 8192
	tp4Buffer = 65536
)

var defServe = cpu.Def{Name: "echo_server", Layer: cpu.LayerAPPL, Instructions: 30, CodeBytes: 256,
	Why: "loop: wait for a request, send its bytes back, count them"}

// Counts are one server's figures.
type Counts struct {
	Port        uint16 `json:"port"`
	Connections uint64 `json:"connections,omitempty"` // accepted (TCP, TP4)
	Open        int    `json:"open,omitempty"`        // still open when the run ended
	Messages    uint64 `json:"messages"`              // datagrams, reads or TSDUs echoed
	BytesIn     uint64 `json:"bytes_in"`
	BytesOut    uint64 `json:"bytes_out"`
	// Errors counts connections that ended in an error (a reset) and
	// sends that failed.
	Errors uint64 `json:"errors"`
	// Failed says why the server could not run.
	Failed string `json:"failed,omitempty"`
}

// HostResult is one host's servers.
type HostResult struct {
	Host string  `json:"host"`
	UDP  *Counts `json:"udp,omitempty"`
	TCP  *Counts `json:"tcp,omitempty"`
	TP4  *Counts `json:"tp4,omitempty"`
}

// Result is the workload's section.
type Result struct {
	// Ended says how the run ended ("" when it ran into stop_at).
	Ended string       `json:"ended,omitempty"`
	Hosts []HostResult `json:"hosts"`
}

// Serve is the servers of every serving host.
type Serve struct {
	p     Params
	hosts []*host
	res   Result
	ok    bool     // the run ended as it should
	at    sim.Time // when it was stopped from outside
}

var _ workload.Server = (*Serve)(nil)

type host struct {
	name string
	k    *kernel.Kernel
	in   *inet.Stack
	iso  *netiso.Family
	sym  *cpu.Symbol
	res  *HostResult
	n    int // threads spawned, for their names
}

// New finds the serving hosts and defines the servers' function.
func New(env workload.Env, p Params) (*Serve, error) {
	s := &Serve{p: p}
	names := p.Hosts
	all := len(names) == 0
	if all {
		for _, h := range env.Hosts() {
			names = append(names, h.Name())
		}
	}
	for i, name := range names {
		wh, err := env.Host(name)
		if err != nil {
			return nil, fmt.Errorf("hosts[%d]: %w", i, err)
		}
		h := &host{name: name}
		h.k, _ = workload.Find[*kernel.Kernel](wh)
		h.in, _ = workload.Find[*inet.Stack](wh)
		h.iso, _ = workload.Find[*netiso.Family](wh)
		if h.k == nil || h.in == nil && h.iso == nil {
			if all {
				continue
			}
			return nil, fmt.Errorf("hosts[%d]: host %q has neither an IP address nor the ISO family to serve on", i, name)
		}
		h.sym = h.k.Symbols().Define(defServe)
		if h.iso != nil {
			h.iso.Define()
		}
		s.hosts = append(s.hosts, h)
	}
	if len(s.hosts) == 0 {
		return nil, fmt.Errorf("hosts: no host has an IP address or the ISO family to serve on")
	}
	s.res.Hosts = make([]HostResult, len(s.hosts))
	for i, h := range s.hosts {
		h.res = &s.res.Hosts[i]
		h.res.Host = h.name
	}
	return s, nil
}

// Start spawns the servers.
func (s *Serve) Start() {
	for _, h := range s.hosts {
		if h.in != nil && s.p.UDPPort != 0 {
			h.res.UDP = &Counts{Port: s.p.UDPPort}
			h.k.Spawn("echo-udp", func(t *kernel.Thread) { s.udp(t, h) })
		}
		if h.in != nil && s.p.TCPPort != 0 {
			h.res.TCP = &Counts{Port: s.p.TCPPort}
			h.k.Spawn("echo-tcp", func(t *kernel.Thread) { s.tcpListen(t, h) })
		}
		if h.iso != nil && s.p.TP4Port != 0 {
			h.res.TP4 = &Counts{Port: s.p.TP4Port}
			h.k.Spawn("echo-tp4", func(t *kernel.Thread) { s.tp4Listen(t, h) })
		}
	}
}

// Until is the end of the servers' run: the duration, or never.
func (s *Serve) Until() sim.Time {
	if s.p.Duration == 0 {
		return sim.Never
	}
	return s.p.Duration
}

// Stopped records how the run ended; with no duration any stop is the
// servers' proper end, with one only reaching it is.
func (s *Serve) Stopped(by string, at sim.Time) bool {
	if by == "" {
		s.res.Ended = fmt.Sprintf("the duration, %v, was reached", s.p.Duration)
		s.ok = true
		return true
	}
	s.res.Ended = fmt.Sprintf("stopped by %s at %v", by, at)
	s.ok = s.p.Duration == 0
	s.at = at
	return s.ok
}

// Result returns every host's counts and a table of them. A server that
// could not start fails the run.
func (s *Serve) Result() (workload.Result, error) {
	t := shape.Table{Title: "echo servers (RFC 862) on the simulated hosts",
		Columns: shape.Cols("host", "server", "port", "connections", "open", "messages", "bytes in", "bytes out", "errors")}
	var failed []string
	for _, h := range s.res.Hosts {
		for _, c := range []struct {
			name string
			c    *Counts
		}{{"udp", h.UDP}, {"tcp", h.TCP}, {"tp4", h.TP4}} {
			if c.c == nil {
				continue
			}
			t.Rows = append(t.Rows, []string{h.Host, c.name, fmt.Sprint(c.c.Port), fmt.Sprint(c.c.Connections), fmt.Sprint(c.c.Open),
				fmt.Sprint(c.c.Messages), fmt.Sprint(c.c.BytesIn), fmt.Sprint(c.c.BytesOut), fmt.Sprint(c.c.Errors)})
			if c.c.Failed != "" {
				failed = append(failed, fmt.Sprintf("%s: %s server: %s", h.Host, c.name, c.c.Failed))
			}
		}
	}
	res := workload.Result{Sections: []workload.Section{{Name: "serve", Value: s.res}}, Figures: shape.Figures{Tables: []shape.Table{t}}}
	if s.res.Ended != "" {
		res.Figures.Text = "serve: " + s.res.Ended + "\n"
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return res, fmt.Errorf("serve: %s", failed[0])
	}
	if s.res.Ended != "" && !s.ok {
		res.Incomplete = fmt.Sprintf("serve: served %v of its duration, %v", s.at, s.p.Duration)
	}
	return res, nil
}

// udp answers every datagram to the port with its bytes.
func (s *Serve) udp(t *kernel.Thread, h *host) {
	c := h.res.UDP
	cp := h.k.CPU()
	cp.Enter(h.sym)
	defer cp.Exit(h.sym)
	st := h.in
	fd, err := st.Socket(t, inet.SockDgram)
	if err == 0 {
		err = st.Bind(t, fd, s.p.UDPPort)
	}
	if err != 0 {
		c.Failed = fmt.Sprintf("bind to port %d: %v", s.p.UDPPort, err)
		return
	}
	buf := h.k.Kmalloc(udpBuffer)
	for {
		n, from, port, err := st.RecvFrom(t, fd, buf, udpBuffer, 0)
		if err != 0 {
			c.Failed = fmt.Sprintf("recvfrom: %v", err)
			return
		}
		c.BytesIn += uint64(n)
		if _, err := st.SendTo(t, fd, buf, n, from, port); err != 0 {
			c.Errors++
			continue
		}
		c.Messages++
		c.BytesOut += uint64(n)
	}
}

// tcpListen accepts connections, a thread each.
func (s *Serve) tcpListen(t *kernel.Thread, h *host) {
	c := h.res.TCP
	st := h.in
	fd, err := st.Socket(t, inet.SockStream)
	if err == 0 {
		err = st.Bind(t, fd, s.p.TCPPort)
	}
	if err == 0 {
		err = st.Listen(t, fd, s.p.Backlog)
	}
	if err != 0 {
		c.Failed = fmt.Sprintf("listen on port %d: %v", s.p.TCPPort, err)
		return
	}
	for {
		nfd, _, _, err := st.Accept(t, fd)
		if err != 0 {
			c.Failed = fmt.Sprintf("accept: %v", err)
			return
		}
		c.Connections++
		c.Open++
		h.n++
		h.k.Spawn(fmt.Sprintf("echo-tcp-%d", h.n), func(t *kernel.Thread) { s.tcpEcho(t, h, nfd) })
	}
}

// tcpEcho sends back what it reads until the peer closes.
func (s *Serve) tcpEcho(t *kernel.Thread, h *host, fd int) {
	c := h.res.TCP
	cp := h.k.CPU()
	cp.Enter(h.sym)
	defer cp.Exit(h.sym)
	st := h.in
	buf := h.k.Kmalloc(tcpBuffer)
	defer func() {
		st.Close(t, fd)
		h.k.Kfree(buf)
		c.Open--
	}()
	for {
		n, err := st.Recv(t, fd, buf, tcpBuffer, 0)
		if err != 0 {
			c.Errors++
			return
		}
		if n == 0 {
			return
		}
		c.BytesIn += uint64(n)
		sent, err := st.Send(t, fd, buf, n)
		c.BytesOut += uint64(sent)
		if err != 0 {
			c.Errors++
			return
		}
		c.Messages++
	}
}

// tp4Listen accepts TP4 connections on the TSAP, a thread each.
func (s *Serve) tp4Listen(t *kernel.Thread, h *host) {
	c := h.res.TP4
	f := h.iso
	var tsap [2]byte
	binary.BigEndian.PutUint16(tsap[:], s.p.TP4Port)
	fd, err := f.Socket(t)
	if err == 0 {
		err = f.Bind(t, fd, tsap[:])
	}
	if err == 0 {
		err = f.Listen(t, fd, s.p.Backlog)
	}
	if err != 0 {
		c.Failed = fmt.Sprintf("listen on TSAP %x: %v", tsap, err)
		return
	}
	for {
		nfd, _, err := f.Accept(t, fd, 0)
		if err != 0 {
			c.Failed = fmt.Sprintf("accept: %v", err)
			return
		}
		c.Connections++
		c.Open++
		h.n++
		h.k.Spawn(fmt.Sprintf("echo-tp4-%d", h.n), func(t *kernel.Thread) { s.tp4Echo(t, h, nfd) })
	}
}

// tp4Echo sends back every TSDU until the peer disconnects.
func (s *Serve) tp4Echo(t *kernel.Thread, h *host, fd int) {
	c := h.res.TP4
	cp := h.k.CPU()
	cp.Enter(h.sym)
	defer cp.Exit(h.sym)
	f := h.iso
	buf := h.k.Kmalloc(tp4Buffer)
	defer func() {
		f.Close(t, fd)
		h.k.Kfree(buf)
		c.Open--
	}()
	got := 0
	for {
		n, eot, err := f.RecvMsg(t, fd, buf+memory.Addr(got), tp4Buffer-got, 0)
		if err != 0 {
			c.Errors++
			return
		}
		if n == 0 && !eot {
			return // the peer released the connection
		}
		got += n
		c.BytesIn += uint64(n)
		if !eot && got < tp4Buffer {
			continue
		}
		sent, err := f.SendMsg(t, fd, buf, got, eot)
		c.BytesOut += uint64(sent)
		if err != 0 {
			c.Errors++
			return
		}
		if eot {
			c.Messages++
		}
		got = 0
	}
}
