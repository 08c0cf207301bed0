package inet

import (
	"fmt"

	"simkron/memory"
	"simkron/sim"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/trace"
)

// Errno is a system call's error number (Linux values); 0 is success.
type Errno int

// Error numbers returned by the socket calls.
const (
	EBADF           Errno = 9
	EAGAIN          Errno = 11
	EINVAL          Errno = 22
	EMFILE          Errno = 24
	EDESTADDRREQ    Errno = 89
	EMSGSIZE        Errno = 90
	EPROTONOSUPPORT Errno = 93
	EADDRINUSE      Errno = 98
	ENETUNREACH     Errno = 101
	ENOBUFS         Errno = 105
	ETIMEDOUT       Errno = 110
	EPIPE           Errno = 32
	EOPNOTSUPP      Errno = 95
	ECONNRESET      Errno = 104
	EISCONN         Errno = 106
	ENOTCONN        Errno = 107
	ECONNREFUSED    Errno = 111
)

var errnoNames = map[Errno]string{
	EBADF: "EBADF", EAGAIN: "EAGAIN", EINVAL: "EINVAL", EMFILE: "EMFILE", EDESTADDRREQ: "EDESTADDRREQ",
	EMSGSIZE: "EMSGSIZE", EPROTONOSUPPORT: "EPROTONOSUPPORT", EADDRINUSE: "EADDRINUSE",
	ENETUNREACH: "ENETUNREACH", ENOBUFS: "ENOBUFS", ETIMEDOUT: "ETIMEDOUT",
	EPIPE: "EPIPE", EOPNOTSUPP: "EOPNOTSUPP", ECONNRESET: "ECONNRESET", EISCONN: "EISCONN",
	ENOTCONN: "ENOTCONN", ECONNREFUSED: "ECONNREFUSED",
}

func (e Errno) Error() string {
	if n, ok := errnoNames[e]; ok {
		return n
	}
	return fmt.Sprintf("errno %d", int(e))
}

// SockType chooses a socket's protocol.
type SockType uint8

// Socket types.
const (
	SockDgram  SockType = iota // UDP
	SockPing                   // ICMP echo (Linux ping sockets)
	SockStream                 // TCP
)

type proto uint8

const (
	protoUDP proto = iota + 1
	protoICMP
	protoTCP
)

// dgram is a datagram waiting on a socket: n bytes at data, inside buf.
type dgram struct {
	buf      netdev.Buf
	data     memory.Addr
	n        int
	from     Addr
	fromPort uint16
}

// Socket is one open socket.
type Socket struct {
	s      *Stack
	fd     int
	proto  proto
	port   uint16
	bound  bool
	queue  []dgram
	queued int
	wait   kernel.WaitQueue
	tcb    *tcb // TCP: the connection or listener; nil before Listen/Connect
	opt    sockOpts
	// gauge names the receive queue in Gauges, once it has been watched.
	gauge string
}

func (so *Socket) enqueue(d dgram) {
	so.queue = append(so.queue, d)
	so.queued += d.n
	if so.s.gauges.Listened() {
		so.showQueue()
	}
	so.s.k.Wakeup(&so.wait)
}

// showQueue fires the length of the socket's receive queue; the caller
// has checked that the stack's gauges are listened to.
func (so *Socket) showQueue() {
	if so.gauge == "" {
		so.gauge = fmt.Sprintf("udp %d receive queue", so.port)
	}
	so.s.gauges.Fire(trace.Gauge{Name: so.gauge, Unit: "datagrams", Value: int64(len(so.queue))})
}

// maxSockets bounds the descriptor table.
const maxSockets = 1024

func (s *Stack) socket(fd int) (*Socket, Errno) {
	if fd < 0 || fd >= len(s.sockets) || s.sockets[fd] == nil {
		return nil, EBADF
	}
	return s.sockets[fd], 0
}

// Socket opens a socket (socket(2)) and returns its descriptor.
func (s *Stack) Socket(t *kernel.Thread, typ SockType) (fd int, err Errno) {
	t.Syscall(s.sym.socket, func() {
		var p proto
		switch typ {
		case SockDgram:
			p = protoUDP
		case SockPing:
			p = protoICMP
		case SockStream:
			p = protoTCP
		default:
			fd, err = -1, EPROTONOSUPPORT
			return
		}
		if fd = s.freeFD(); fd < 0 {
			err = EMFILE
			return
		}
		s.sockets[fd] = &Socket{s: s, fd: fd, proto: p,
			opt: sockOpts{sndBuf: int(s.p.TCPSendBuffer), rcvBuf: int(s.p.TCPRecvBuffer)}}
	})
	return fd, err
}

// freeFD returns the lowest free descriptor, growing the table, or -1
// when the table is full.
func (s *Stack) freeFD() int {
	for i, so := range s.sockets {
		if so == nil {
			return i
		}
	}
	if len(s.sockets) >= maxSockets {
		return -1
	}
	s.sockets = append(s.sockets, nil)
	return len(s.sockets) - 1
}

// Bind gives the socket a local port (bind(2)); 0 picks a free one.
func (s *Stack) Bind(t *kernel.Thread, fd int, port uint16) (err Errno) {
	t.Syscall(s.sym.bind, func() {
		so, e := s.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if so.bound {
			err = EINVAL
			return
		}
		if port == 0 {
			err = s.autobind(so)
			return
		}
		if s.ports[port] != nil {
			err = EADDRINUSE
			return
		}
		so.port, so.bound = port, true
		s.ports[port] = so
	})
	return err
}

// autobind picks the next free ephemeral port (32768–60999, as Linux).
func (s *Stack) autobind(so *Socket) Errno {
	for range 61000 - 32768 {
		p := s.nextPort
		s.nextPort++
		if s.nextPort >= 61000 {
			s.nextPort = 32768
		}
		if s.ports[p] == nil {
			so.port, so.bound = p, true
			s.ports[p] = so
			return 0
		}
	}
	return EADDRINUSE
}

// SendTo sends n bytes at the user address buf to dst:port (sendto(2)).
// On a ping socket the data is an ICMP echo message and port is unused.
func (s *Stack) SendTo(t *kernel.Thread, fd int, buf memory.Addr, n int, dst Addr, port uint16) (sent int, err Errno) {
	t.Syscall(s.sym.sendto, func() {
		so, e := s.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if n < 0 {
			err = EINVAL
			return
		}
		switch so.proto {
		case protoTCP:
			err = EOPNOTSUPP
			return
		case protoUDP:
			if port == 0 {
				err = EDESTADDRREQ
				return
			}
			err = s.udpSendmsg(t, so, buf, n, dst, port)
		case protoICMP:
			err = s.icmpSendEcho(t, so, buf, n, dst)
		}
		if err == 0 {
			sent = n
		}
	})
	return sent, err
}

// RecvFrom waits for a datagram and copies up to n bytes of it to the user
// address buf (recvfrom(2)); the rest of a longer datagram is discarded.
// timeout 0 waits for ever; otherwise ETIMEDOUT when nothing came.
func (s *Stack) RecvFrom(t *kernel.Thread, fd int, buf memory.Addr, n int, timeout sim.Time) (got int, from Addr, port uint16, err Errno) {
	t.Syscall(s.sym.recvfrom, func() {
		so, e := s.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if so.proto == protoTCP {
			err = EOPNOTSUPP
			return
		}
		c := s.c
		c.Enter(s.sym.udpRecv)
		defer c.Exit(s.sym.udpRecv)
		deadline := c.LocalTime() + timeout
		for len(so.queue) == 0 {
			if timeout == 0 {
				t.Sleep(&so.wait)
				continue
			}
			// A timer runs out on a tick, which may come before the
			// deadline: sleep again for what is left.
			left := deadline - c.LocalTime()
			if left <= 0 {
				err = ETIMEDOUT
				return
			}
			t.SleepTimeout(&so.wait, left)
		}
		d := kernel.PopFront(&so.queue)
		so.queued -= d.n
		if s.gauges.Listened() {
			so.showQueue()
		}
		got = min(n, d.n)
		s.k.Bcopy(buf, d.data, got)
		d.buf.Free(s.k)
		from, port = d.from, d.fromPort
	})
	return got, from, port, err
}

// Close closes the socket (close(2)), dropping what waits on it.
func (s *Stack) Close(t *kernel.Thread, fd int) (err Errno) {
	t.Syscall(s.sym.close, func() {
		so, e := s.socket(fd)
		if e != 0 {
			err = e
			return
		}
		if so.proto == protoTCP {
			s.tcpCloseSocket(t, so)
			s.sockets[fd] = nil
			return
		}
		for _, d := range so.queue {
			d.buf.Free(s.k)
		}
		had := len(so.queue) > 0
		so.queue = nil
		if had && s.gauges.Listened() {
			so.showQueue()
		}
		if so.bound && s.ports[so.port] == so {
			delete(s.ports, so.port)
		}
		s.sockets[fd] = nil
	})
	return err
}
