package netiso

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/osi"
	"simkron/stack/osi/tp4"
)

// Errno is a system call's error number (Linux values); 0 is success.
type Errno int

// Error numbers of the socket calls.
const (
	EBADF        Errno = 9
	EINVAL       Errno = 22
	EMFILE       Errno = 24
	EPIPE        Errno = 32
	EMSGSIZE     Errno = 90
	EADDRINUSE   Errno = 98
	ENOBUFS      Errno = 105
	EISCONN      Errno = 106
	ENOTCONN     Errno = 107
	ETIMEDOUT    Errno = 110
	ECONNREFUSED Errno = 111
	ECONNRESET   Errno = 104
)

var errnoNames = map[Errno]string{
	EBADF: "EBADF", EINVAL: "EINVAL", EMFILE: "EMFILE", EPIPE: "EPIPE", EMSGSIZE: "EMSGSIZE",
	EADDRINUSE: "EADDRINUSE", ENOBUFS: "ENOBUFS", EISCONN: "EISCONN", ENOTCONN: "ENOTCONN",
	ETIMEDOUT: "ETIMEDOUT", ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET",
}

func (e Errno) Error() string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// The socket calls' entries (layer APPL, as inet's sys_* calls: the
// socket layer's part) and TP4's part of each (tp_usrreq's requests in
// 4.4BSD netiso, layer TP4).
var (
	defSysSocket  = cpu.Def{Name: "iso_socket", Layer: cpu.LayerAPPL, Instructions: 150, CodeBytes: 512, Why: "socket(AF_ISO, SOCK_SEQPACKET): allocate the socket and its file descriptor"}
	defSysBind    = cpu.Def{Name: "iso_bind", Layer: cpu.LayerAPPL, Instructions: 90, CodeBytes: 384, Why: "copy in the TSAP selector, check it is free, claim it"}
	defSysListen  = cpu.Def{Name: "iso_listen", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 256, Why: "mark the socket listening, set its backlog"}
	defSysAccept  = cpu.Def{Name: "iso_accept", Layer: cpu.LayerAPPL, Instructions: 120, CodeBytes: 512, Why: "wait for a connection, take it off the queue, give it a descriptor, copy out the address"}
	defSysConnect = cpu.Def{Name: "iso_connect", Layer: cpu.LayerAPPL, Instructions: 100, CodeBytes: 384, Why: "copy in the transport address, wait for the connection"}
	defSysSend    = cpu.Def{Name: "iso_sendmsg", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, copy in the message header, call the protocol (sosend)"}
	defSysRecv    = cpu.Def{Name: "iso_recvmsg", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, call the protocol (soreceive), copy out the flags (MSG_EOR)"}
	defSysClose   = cpu.Def{Name: "iso_close", Layer: cpu.LayerAPPL, Instructions: 80, CodeBytes: 384, Why: "release the descriptor, disconnect, free what the socket holds"}
	defTPSend     = cpu.Def{Name: "tp_sosend", Layer: cpu.LayerTP4, Instructions: 60, CodeBytes: 512, Why: "per call: a block for the user's bytes, copy them in, chain them to the TSDU; at EOT hand the TSDU to TP4, waiting for room"}
	defTPRecv     = cpu.Def{Name: "tp_soreceive", Layer: cpu.LayerTP4, Instructions: 60, CodeBytes: 512, Why: "per call: wait for a TSDU, copy its octets out piece by piece, free them, reopen the window"}
	defTPUsr      = cpu.Def{Name: "tp_usrreq", Layer: cpu.LayerTP4, Instructions: 40, CodeBytes: 384, Why: "the protocol's part of bind, listen, connect, accept and close: TSAP table, reference, state"}
	defTPInd      = cpu.Def{Name: "tp_indicate", Layer: cpu.LayerTP4, Instructions: 25, CodeBytes: 192, Why: "an indication to the socket: queue the TSDU or connection, note the state, wake the sleepers"}
)

// sysSyms are the socket calls' symbols.
type sysSyms struct {
	socket, bind, listen, accept, connect, send, recv, close, tpSend, tpRecv, tpUsr, tpInd *cpu.Symbol
}

func (f *Family) defineSyscalls() {
	syms := f.k.Symbols()
	s := &f.sys
	syms.DefineAll([]cpu.Binding{
		{&s.socket, defSysSocket}, {&s.bind, defSysBind}, {&s.listen, defSysListen}, {&s.accept, defSysAccept},
		{&s.connect, defSysConnect}, {&s.send, defSysSend}, {&s.recv, defSysRecv}, {&s.close, defSysClose},
		{&s.tpSend, defTPSend}, {&s.tpRecv, defTPRecv}, {&s.tpUsr, defTPUsr}, {&s.tpInd, defTPInd},
	})
}

// Symbols of the calls a measurement watches (Define places them).
const (
	SendSymbol = "iso_sendmsg"
	RecvSymbol = "iso_recvmsg"
)

// Socket states.
type sockState uint8

const (
	sockNew sockState = iota
	sockListening
	sockConnecting
	sockConnected
	sockClosed // the connection is gone (released, refused, lost)
)

// rxTSDU is a complete TSDU waiting for the program.
type rxTSDU struct {
	ch osi.Chain
	n  int // octets not yet read
}

// Socket is one ISO socket (SOCK_SEQPACKET over TP4).
type Socket struct {
	f      *Family
	fd     int
	state  sockState
	tsap   []byte
	conn   *tp4.Conn
	remote tp4.Address
	// A listening socket's offered connections, accepted by TP4 and
	// waiting for accept().
	pending []*Socket
	backlog int
	// Complete TSDUs received, oldest first, and their octets.
	rq      []rxTSDU
	rqBytes int
	closed  bool // the window is closed for want of receive space
	// The TSDU being sent: its chain and octets so far.
	snd    osi.Chain
	sndLen int
	ready  bool // TP4 has room again
	err    Errno
	eof    bool
	// Disconnect is the last T-DISCONNECT indication's parameters.
	Disconnect tp4.Disconnect
	wait       kernel.WaitQueue
}

var _ tp4.User = (*Socket)(nil)

func (f *Family) socket(fd int) (*Socket, Errno) {
	if fd < 0 || fd >= len(f.sockets) || f.sockets[fd] == nil {
		return nil, EBADF
	}
	return f.sockets[fd], 0
}

// newFD gives s the lowest free descriptor; -1 when the table is full.
func (f *Family) newFD(s *Socket) int {
	for i, x := range f.sockets {
		if x == nil {
			f.sockets[i], s.fd = s, i
			return i
		}
	}
	if len(f.sockets) >= 256 {
		return -1
	}
	f.sockets = append(f.sockets, s)
	s.fd = len(f.sockets) - 1
	return s.fd
}

// Socket opens an ISO transport socket (socket(AF_ISO, SOCK_SEQPACKET,
// 0)) and returns its descriptor.
func (f *Family) Socket(t *kernel.Thread) (fd int, err Errno) {
	f.Define()
	t.Syscall(f.sys.socket, func() {
		if fd = f.newFD(&Socket{f: f}); fd < 0 {
			err = EMFILE
		}
		f.stats.Sockets++
	})
	return fd, err
}

// Bind gives the socket its TSAP selector (bind(2) of a sockaddr_iso).
func (f *Family) Bind(t *kernel.Thread, fd int, tsap []byte) (err Errno) {
	f.Define()
	t.Syscall(f.sys.bind, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		f.c.Call(f.sys.tpUsr, func() {
			for _, o := range f.sockets {
				if o != nil && o != s && string(o.tsap) == string(tsap) && o.state != sockClosed && len(tsap) > 0 {
					err = EADDRINUSE
					return
				}
			}
			if len(tsap) > 32 || s.state != sockNew {
				err = EINVAL
				return
			}
			s.tsap = append([]byte(nil), tsap...)
		})
	})
	return err
}

// Listen makes the socket accept connections to its TSAP (listen(2)).
func (f *Family) Listen(t *kernel.Thread, fd, backlog int) (err Errno) {
	f.Define()
	t.Syscall(f.sys.listen, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		f.lock()
		defer f.unlock()
		f.c.Call(f.sys.tpUsr, func() {
			if s.state != sockNew || len(s.tsap) == 0 {
				err = EINVAL
				return
			}
			if f.tp.Listen(s.tsap, s) != nil {
				err = EADDRINUSE
				return
			}
			s.state, s.backlog = sockListening, max(1, min(backlog, f.p.Backlog))
		})
	})
	return err
}

// sleep lets go of the family while t waits on s (at most timeout, 0
// for ever) and takes it again; it reports whether the time ran out.
func (s *Socket) sleep(t *kernel.Thread, timeout sim.Time) bool {
	f := s.f
	f.unlock()
	out := false
	if timeout > 0 {
		out = t.SleepTimeout(&s.wait, timeout)
	} else {
		t.Sleep(&s.wait)
	}
	f.lock()
	return out
}

// Accept takes the next connection of a listening socket (accept(2)),
// waiting at most timeout (0: for ever), and returns its descriptor and
// the caller's address.
func (f *Family) Accept(t *kernel.Thread, fd int, timeout sim.Time) (nfd int, remote tp4.Address, err Errno) {
	f.Define()
	nfd = -1
	t.Syscall(f.sys.accept, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if s.state != sockListening {
			err = EINVAL
			return
		}
		f.lock()
		defer f.unlock()
		deadline := f.c.LocalTime() + timeout
		for len(s.pending) == 0 {
			left := deadline - f.c.LocalTime()
			if timeout > 0 && left <= 0 {
				err = ETIMEDOUT
				return
			}
			if timeout == 0 {
				left = 0
			}
			s.sleep(t, left)
		}
		f.c.Call(f.sys.tpUsr, func() {
			ns := kernel.PopFront(&s.pending)
			if nfd = f.newFD(ns); nfd < 0 {
				err = EMFILE
				ns.conn.Disconnect()
				return
			}
			remote = ns.remote
			f.stats.Accepted++
		})
	})
	return nfd, remote, err
}

// Connect connects the socket to the transport address remote
// (connect(2)) and waits for the connection, at most timeout (0: TP4's
// own retransmissions decide).
func (f *Family) Connect(t *kernel.Thread, fd int, remote tp4.Address, timeout sim.Time) (err Errno) {
	f.Define()
	t.Syscall(f.sys.connect, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if s.state != sockNew {
			err = EISCONN
			return
		}
		f.lock()
		defer f.unlock()
		f.c.Call(f.sys.tpUsr, func() {
			c, e := f.tp.Connect(s, f.Address(s.tsap), remote)
			if e != nil {
				err = ENOBUFS
				return
			}
			s.conn, s.remote, s.state = c, remote, sockConnecting
		})
		if err != 0 {
			return
		}
		deadline := f.c.LocalTime() + timeout
		for s.state == sockConnecting {
			left := deadline - f.c.LocalTime()
			if timeout > 0 && left <= 0 {
				err = ETIMEDOUT
				return
			}
			if timeout == 0 {
				left = 0
			}
			s.sleep(t, left)
		}
		if s.state != sockConnected {
			err = s.err
			if err == 0 {
				err = ECONNREFUSED
			}
		}
	})
	return err
}

// SendMsg sends the n octets at buf as part of the socket's current
// TSDU; with eot the TSDU ends there and goes to TP4, the call waiting
// for room in TP4's send queue (sendmsg(2), MSG_EOR for eot). It returns
// the octets taken.
func (f *Family) SendMsg(t *kernel.Thread, fd int, buf memory.Addr, n int, eot bool) (sent int, err Errno) {
	f.Define()
	t.Syscall(f.sys.send, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if s.state != sockConnected {
			err = ENOTCONN
			if s.state == sockClosed {
				err = EPIPE
			}
			return
		}
		c := f.c
		c.Enter(f.sys.tpSend)
		defer c.Exit(f.sys.tpSend)
		f.lock()
		defer f.unlock()
		f.stats.SendCalls++
		// The user's bytes go into clusters, as BSD's sosend copies into
		// mbuf clusters, chained to the TSDU.
		for off := 0; off < n; off += clusterSize {
			m := min(clusterSize, n-off)
			ch, data := f.bufs.New(osi.Tx, m)
			if ch == 0 {
				err = ENOBUFS
				return
			}
			f.k.Bcopy(data, buf+memory.Addr(off), m)
			f.stats.Copied += uint64(m)
			s.snd = f.bufs.Append(s.snd, ch)
			s.sndLen += m
		}
		sent = n
		if !eot {
			return
		}
		tsdu, size := s.snd, s.sndLen
		s.snd, s.sndLen = 0, 0
		if tsdu == 0 {
			// An empty TSDU: one DT with EOT and no data.
			if tsdu, _ = f.bufs.New(osi.Tx, 0); tsdu == 0 {
				err = ENOBUFS
				return
			}
		}
		for {
			if s.state != sockConnected {
				f.bufs.Free(tsdu)
				err = EPIPE
				return
			}
			s.ready = false
			if s.conn.Data(tsdu) {
				f.stats.TSDUsSent++
				f.stats.OctetsSent += uint64(size)
				return
			}
			if dts(s.conn, size) > s.conn.Room()+s.conn.Window().Held {
				// More DTs than TP4's whole send queue: it can never go.
				f.bufs.Free(tsdu)
				err = EMSGSIZE
				return
			}
			s.conn.NotifyReady()
			for !s.ready && s.state == sockConnected {
				s.sleep(t, 0)
			}
		}
	})
	return sent, err
}

// clusterSize is the largest block the user's bytes are copied into: a
// page, as 4.4BSD's larger mbuf clusters (a descriptor's length is 16
// bits).
const clusterSize = 4096

// dts returns how many DTs a TSDU of n octets takes on connection c.
func dts(c *tp4.Conn, n int) int {
	ext, cksum, _, size := c.Negotiated()
	per := size - 1 - header.TPDUFixedLen(header.TPDUCodeDT, ext)
	if cksum {
		per -= header.TPDUChecksumParamLen
	}
	return max(1, (n+per-1)/per)
}

// RecvMsg copies octets of the socket's oldest TSDU into buf (at most
// cap), waiting at most timeout for one (0: for ever); eot reports that
// the TSDU's end was copied (recvmsg(2)'s MSG_EOR). At the end of the
// connection it returns 0 octets; a lost connection is an error.
func (f *Family) RecvMsg(t *kernel.Thread, fd int, buf memory.Addr, cap int, timeout sim.Time) (n int, eot bool, err Errno) {
	f.Define()
	t.Syscall(f.sys.recv, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if s.state != sockConnected && s.state != sockClosed {
			err = ENOTCONN
			return
		}
		c := f.c
		c.Enter(f.sys.tpRecv)
		defer c.Exit(f.sys.tpRecv)
		f.lock()
		defer f.unlock()
		f.stats.RecvCalls++
		deadline := c.LocalTime() + timeout
		for len(s.rq) == 0 {
			if s.state == sockClosed {
				err = s.err
				return
			}
			left := deadline - c.LocalTime()
			if timeout > 0 && left <= 0 {
				err = ETIMEDOUT
				return
			}
			if timeout == 0 {
				left = 0
			}
			s.sleep(t, left)
		}
		r := &s.rq[0]
		want := min(cap, r.n)
		f.bufs.Pieces(r.ch, func(a memory.Addr, k int) {
			if n < want {
				m := min(k, want-n)
				f.k.Bcopy(buf+memory.Addr(n), a, m)
				n += m
			}
		})
		f.stats.OctetsReceived += uint64(n)
		s.rqBytes -= n
		if n == r.n {
			f.bufs.Free(r.ch)
			kernel.PopFront(&s.rq)
			eot = true
		} else {
			f.bufs.Pull(r.ch, n)
			r.n -= n
		}
		if s.closed && s.rqBytes < int(f.p.RecvSpace) && s.conn != nil && s.conn.State() == tp4.StateOpen {
			s.closed = false
			s.conn.SetCredit(f.p.TP4.Credit)
		}
	})
	return n, eot, err
}

// Close closes the socket (close(2)). A transport disconnect discards
// the data not yet acknowledged (ISO 8072), so the call first waits until
// TP4 holds none of the socket's DTs any more, as a socket lingers until
// its send buffer has drained; then the connection is released (DR) and
// what the socket holds is freed.
func (f *Family) Close(t *kernel.Thread, fd int) (err Errno) {
	f.Define()
	t.Syscall(f.sys.close, func() {
		s, e := f.socket(fd)
		if e != 0 {
			err = e
			return
		}
		f.lock()
		defer f.unlock()
		for s.state == sockConnected && s.conn.Window().Held > 0 {
			s.conn.NotifyReady()
			s.ready = false
			s.sleep(t, 0)
		}
		f.c.Call(f.sys.tpUsr, func() {
			if s.conn != nil && s.state != sockClosed {
				s.conn.Disconnect()
			}
			for _, p := range s.pending {
				p.conn.Disconnect()
				p.free()
			}
			s.pending = nil
			s.free()
			s.state = sockClosed
			f.sockets[fd] = nil
		})
	})
	return err
}

// free gives back the socket's queued TSDUs.
func (s *Socket) free() {
	for _, r := range s.rq {
		s.f.bufs.Free(r.ch)
	}
	s.rq, s.rqBytes = nil, 0
	s.f.bufs.Free(s.snd)
	s.snd, s.sndLen = 0, 0
}

// The transport service's indications to the socket (tp4.User).

// TConnectIndication offers a connection to a listening socket: it is
// accepted at once while the backlog has room (its own socket waits in
// the queue for accept()), refused otherwise.
func (s *Socket) TConnectIndication(c *tp4.Conn) {
	f := s.f
	f.c.Call(f.sys.tpInd, func() {
		if s.state != sockListening || len(s.pending) >= s.backlog {
			f.stats.Refused++
			c.Refuse(header.TPDUReasonRefused)
			return
		}
		ns := &Socket{f: f, fd: -1, state: sockConnected, tsap: s.tsap, conn: c, remote: c.Remote()}
		c.SetUser(ns)
		c.Accept()
		s.pending = append(s.pending, ns)
		f.k.Wakeup(&s.wait)
	})
}

// TConnectConfirm says the connection asked for is open.
func (s *Socket) TConnectConfirm(c *tp4.Conn) {
	f := s.f
	f.c.Call(f.sys.tpInd, func() {
		s.state = sockConnected
		f.k.Wakeup(&s.wait)
	})
}

// TDataIndication queues a complete TSDU for the program; past the
// receive space the window closes until the program reads.
func (s *Socket) TDataIndication(c *tp4.Conn, tsdu osi.Chain) {
	f := s.f
	f.c.Call(f.sys.tpInd, func() {
		n := f.bufs.Len(tsdu)
		if s.state == sockClosed {
			f.bufs.Free(tsdu)
			return
		}
		s.rq = append(s.rq, rxTSDU{ch: tsdu, n: n})
		s.rqBytes += n
		f.stats.TSDUsReceived++
		if s.rqBytes >= int(f.p.RecvSpace) && !s.closed {
			s.closed = true
			f.stats.WindowsClosed++
			c.SetCredit(0)
		}
		f.k.Wakeup(&s.wait)
	})
}

// TExpeditedIndication drops expedited data: the sockets do not offer it.
func (s *Socket) TExpeditedIndication(c *tp4.Conn, data osi.Chain) {
	s.f.stats.EDDropped++
	s.f.bufs.Free(data)
}

// TDisconnectIndication ends the connection: a normal release by the
// peer is the end of the data (0 octets to read), anything else an
// error.
func (s *Socket) TDisconnectIndication(c *tp4.Conn, d tp4.Disconnect) {
	f := s.f
	f.c.Call(f.sys.tpInd, func() {
		s.Disconnect = d
		switch {
		case s.state == sockConnecting && (d.Cause == tp4.CauseRefused || d.Cause == tp4.CausePeer):
			s.err = ECONNREFUSED
		case s.state == sockConnecting:
			s.err = ETIMEDOUT
		case d.Cause == tp4.CausePeer:
			s.eof = true
		case d.Cause == tp4.CauseInactivity || d.Cause == tp4.CauseRetransmission || d.Cause == tp4.CauseNoResponse:
			s.err = ETIMEDOUT
		default:
			s.err = ECONNRESET
		}
		s.state = sockClosed
		f.k.Wakeup(&s.wait)
	})
}

// TReady says TP4 has room again for data.
func (s *Socket) TReady(c *tp4.Conn) {
	s.ready = true
	s.f.k.Wakeup(&s.wait)
}

// Conn returns a connected socket's TP4 connection (nil otherwise), for
// observers.
func (f *Family) Conn(fd int) *tp4.Conn {
	s, e := f.socket(fd)
	if e != 0 {
		return nil
	}
	return s.conn
}
