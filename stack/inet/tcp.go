package inet

// TCP (RFC 793, with RFC 1122's corrections, RFC 5681 congestion control
// and RFC 6298 retransmission timing), shaped after 4.4BSD's tcp_output
// and tcp_input with Linux 2.2's costs.
//
// Connection states (RFC 793 section 3.2, figure 6):
//
//	                 CLOSED
//	   connect: SYN │      │ listen
//	                ▼      ▼
//	        SYN_SENT        LISTEN ──SYN / SYN+ACK──► SYN_RCVD
//	           │ SYN+ACK / ACK                          │ ACK
//	           └──────────────► ESTABLISHED ◄───────────┘
//	       close: FIN │                    │ FIN / ACK
//	                  ▼                    ▼
//	            FIN_WAIT_1 ─FIN/ACK─► CLOSING    CLOSE_WAIT
//	    ACK of FIN │                    │ ACK        │ close: FIN
//	               ▼                    ▼            ▼
//	            FIN_WAIT_2 ─FIN/ACK─► TIME_WAIT   LAST_ACK ─ACK─► CLOSED
//	                                    │ 2·MSL
//	                                    ▼
//	                                  CLOSED
//
// Buffers live in kernel memory. Data to send moves as Linux 2.2 moves
// it (docs/reference/inet-notes.md sec. 7): send copies the user's bytes into TCP's own
// buffers on the write queue, checksumming them in the same pass
// (csum_and_copy_from_user in tcp_do_sendmsg), and keeps each buffer's sum
// with it; a transmission clones the buffer (skb_clone: the data is not
// touched again), pushes the TCP header, finishes the checksum from the
// kept sum and hands the clone to IP (ip_queue_xmit), which only adds its
// header; a retransmission clones again, or copies the buffer when the
// card still holds the last clone (tcp_retransmit_skb). tcp_wq.go has the
// write queue. The receive buffer is a ring: segments are checksummed
// where they arrived, their data copied into the ring at its sequence
// offset (out-of-order data included, remembered as ranges) and freed;
// recv copies out.
//
//	write queue: sndBase ──acked up to snd_una──► snd_nxt ──► sndBase+slen
//	             │ sent, unacknowledged │ queued, unsent │ (slen ≤ scap)
//	recv ring:   rhead ──rlen──► (rcv_nxt) ─ out-of-order ranges ─► rcap
//
// Every connection-changing path runs with the socket owned (Linux's
// sock_owned_by_user): a system call owns its socket while it works, and
// segments arriving meanwhile (the receive softirq can run inside the
// transmit path) wait on a backlog processed when the call lets go; timers
// that find the socket owned retry on the next tick.
//
// Simplifications: no urgent data, no options but MSS (no window scaling,
// timestamps or SACK); FIN_WAIT_2 has no orphan timeout; simultaneous
// open is answered with a reset; TCP and UDP share one port space. The
// MSS is the interface MTU − 40, rounded down to whole clusters when
// Params.TCPMSSCluster asks for 4.4BSD's tcp_mss (which also rounds the
// socket buffers up to whole segments: not modelled). The send decisions
// are 4.4BSD's tcp_output over byte ranges; where one asks for a range
// that does not match the write queue's buffers, the buffers are cut
// (tcp_fragment) or merged (tcp_retrans_try_collapse) to fit it, so the
// segments are BSD's and the data movement Linux's. The send buffer's
// limit counts data bytes, as BSD's sb_hiwat does, not the buffers'
// memory (Linux's wmem_alloc against sndbuf).

import (
	"fmt"

	"simkron/cpu"
	"simkron/memory"
	"simkron/sim"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
	"simkron/trace"
)

type tcpState uint8

const (
	tcpClosed tcpState = iota
	tcpListen
	tcpSynSent
	tcpSynRcvd
	tcpEstablished
	tcpFinWait1
	tcpFinWait2
	tcpCloseWait
	tcpClosing
	tcpLastAck
	tcpTimeWait
)

var tcpStateNames = [...]string{"CLOSED", "LISTEN", "SYN_SENT", "SYN_RCVD", "ESTABLISHED",
	"FIN_WAIT_1", "FIN_WAIT_2", "CLOSE_WAIT", "CLOSING", "LAST_ACK", "TIME_WAIT"}

func (st tcpState) String() string { return tcpStateNames[st] }

// Sequence-space comparisons (RFC 793 section 3.3, modulo 2^32).
func seqLT(a, b uint32) bool  { return int32(a-b) < 0 }
func seqLEQ(a, b uint32) bool { return int32(a-b) <= 0 }
func seqGT(a, b uint32) bool  { return int32(a-b) > 0 }
func seqGEQ(a, b uint32) bool { return int32(a-b) >= 0 }

// TCP limits.
const (
	tcpMaxRetries    = 12              // data retransmissions before ETIMEDOUT (BSD TCP_MAXRXTSHIFT)
	tcpMaxSynRetries = 6               // SYN retransmissions before ETIMEDOUT (Linux net.ipv4.tcp_syn_retries: with a 1 s initial RTO a connect gives up after 127 s)
	tcpMaxRTO        = 64 * sim.Second // backoff ceiling (BSD TCPTV_REXMTMAX)
	tcpMaxWindow     = 65535           // no window scaling
)

// TCPMaxRTO is the longest a connection that is still trying waits
// between two segments it sends: the ceiling of the retransmission
// timeout's backoff, which paces the SYNs, the data sent again and the
// window probes.
const TCPMaxRTO = tcpMaxRTO

// ShutHow says which side Shutdown closes.
type ShutHow int

// Shutdown directions (shutdown(2)).
const (
	ShutRd ShutHow = iota
	ShutWr
	ShutRdWr
)

// SockOpt is a socket option for SetOption.
type SockOpt int

// Socket options.
const (
	OptNoDelay   SockOpt = iota + 1 // TCP_NODELAY: 1 turns Nagle off
	OptSndBuf                       // SO_SNDBUF in bytes, before connect or listen
	OptRcvBuf                       // SO_RCVBUF in bytes, before connect or listen
	OptQuickAck                     // 1 acknowledges every data segment at once: delayed ACKs off (Linux TCP_QUICKACK, kept on)
	OptKeepAlive                    // SO_KEEPALIVE: 1 probes the peer of an idle connection (off by default)
)

type sockOpts struct {
	noDelay, quickAck, keepAlive bool
	sndBuf, rcvBuf               int
}

type connKey struct {
	lport uint16
	raddr Addr
	rport uint16
}

type seqRange struct{ start, end uint32 }

// backlogSeg is a segment that arrived while its socket was owned.
type backlogSeg struct {
	buf  netdev.Buf
	info ipHeaderInfo
}

// tcb is a connection's (or listener's) control block.
type tcb struct {
	s     *Stack
	so    *Socket // nil once the descriptor is closed, or before accept
	state tcpState
	lport uint16
	raddr Addr
	rport uint16

	// Send side (RFC 793 section 3.2 names).
	iss, sndUna, sndNxt, sndMax uint32
	sndWnd, maxSndWnd           int
	sndWl1, sndWl2              uint32
	mss                         int // largest segment we send
	cwnd, ssthresh, dupAcks     int
	// The write queue: slen bytes from sndBase in buffers of
	// consecutive sequence ranges, at most scap bytes (SO_SNDBUF).
	wq                 []*wqBuf
	scap, slen         int
	sndBase            uint32 // sequence number of the first byte queued
	finQueued, finSent bool

	// Receive side.
	irs, rcvNxt, rcvAdv uint32
	rcvAcked            uint32 // ACK field of the last segment sent
	rmss                int    // largest segment we accept (our MSS option)
	rcvMSS              int    // largest segment seen (Linux rcv_mss)
	quickAcks           int    // data segments still acknowledged at once
	rbuf                memory.Addr
	rcap, rhead, rlen   int
	ooo                 []seqRange
	finRcvd, eof        bool // a FIN is known at finSeq; it has been reached
	finSeq              uint32
	rdShut              bool

	// Flags.
	ackNow, delAck, force bool
	opt                   sockOpts // the socket's options when tp was made, and any set since

	// Keep-alive: when the last segment arrived (in ticks) and the
	// probes sent since.
	idleSince  uint64
	keepProbes int

	// Retransmission timing (RFC 6298).
	srtt, rttvar, rto sim.Time
	timing            bool
	rtSeq             uint32
	rtStart           sim.Time
	rxtShift          int
	oowSent           bool
	lastOOW           sim.Time // last ACK answering an out-of-window segment

	rexmt, persist, delack, tw, keep kernel.Timer

	// Listener.
	parent  *tcb
	acceptQ []*tcb
	backlog int
	synQ    int

	orphan *Socket // the closed socket whose port and rings go when tp ends
	owned  bool
	// outputting is set while tcp_output runs on tp: it is never
	// entered again from inside (a simulator bug if it were).
	outputting bool
	pending    []backlogSeg
	err        Errno
	wait       kernel.WaitQueue
	// gauges name the receive queue and the backlog in Gauges, once they
	// have been watched.
	gauges [2]string
}

// showReceive fires the bytes of tp's receive buffer a program has not
// read, showBacklog the segments on its backlog; the caller has checked
// that the stack's gauges are listened to.
func (tp *tcb) showReceive() { tp.showGauge(0, " receive queue", "bytes", tp.rlen) }
func (tp *tcb) showBacklog() { tp.showGauge(1, " backlog", "segments", len(tp.pending)) }

func (tp *tcb) showGauge(i int, what, unit string, v int) {
	if tp.gauges[i] == "" {
		a := tp.raddr
		tp.gauges[i] = fmt.Sprintf("tcp %d-%d.%d.%d.%d:%d%s", tp.lport, a[0], a[1], a[2], a[3], tp.rport, what)
	}
	tp.s.gauges.Fire(trace.Gauge{Name: tp.gauges[i], Unit: unit, Value: int64(v)})
}

// tcpStack is the stack's TCP state.
type tcpStack struct {
	conns map[connKey]*tcb
	isn   interface{ Uint32() uint32 }
	sym   struct {
		listen, accept, connect, send, recv, shutdown, setsockopt *cpu.Symbol
		sendmsg, recvmsg, rcv, ack, data, output, xmit, reset     *cpu.Symbol
		connReq, rexmtTimer, delackTimer, probeTimer, twTimer     *cpu.Symbol
		keepTimer                                                 *cpu.Symbol
		closeSym                                                  *cpu.Symbol
		sendSkb, sendAck, fragment, collapse, cleanRtx            *cpu.Symbol
	}
	// cloner clones and copies write-queue buffers for transmission.
	cloner *netdev.Cloner
	// headroom is what a TCP buffer leaves before its data for the
	// TCP, IP and link headers.
	headroom int
	// wqFree holds write-queue entries for reuse.
	wqFree []*wqBuf
}

// TCP symbols, costs estimated from Linux 2.2's net/ipv4/tcp*.c (copies,
// checksums and header bytes are charged as they happen).
var (
	defSysListen     = cpu.Def{Name: "sys_listen", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 256, Why: "find the socket, check the state, set the backlog"}
	defSysAccept     = cpu.Def{Name: "sys_accept", Layer: cpu.LayerAPPL, Instructions: 160, CodeBytes: 640, Why: "find the socket, wait, allocate the new socket and descriptor"}
	defSysConnect    = cpu.Def{Name: "sys_connect", Layer: cpu.LayerAPPL, Instructions: 90, CodeBytes: 384, Why: "find the socket, copy in the address, call the protocol, wait"}
	defSysSend       = cpu.Def{Name: "sys_send", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, call the protocol (sock_sendmsg)"}
	defSysRecv       = cpu.Def{Name: "sys_recv", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, call the protocol (sock_recvmsg)"}
	defSysShutdown   = cpu.Def{Name: "sys_shutdown", Layer: cpu.LayerAPPL, Instructions: 50, CodeBytes: 256, Why: "find the socket, call the protocol"}
	defSysSetsockopt = cpu.Def{Name: "sys_setsockopt", Layer: cpu.LayerAPPL, Instructions: 60, CodeBytes: 384, Why: "find the socket, copy in the value, switch on the option"}
	defTCPSendmsg    = cpu.Def{Name: "tcp_sendmsg", Layer: cpu.LayerTCP, Instructions: 140, CodeBytes: 1536, Why: "state checks, wait for room, queue the data, push"}
	defTCPRecvmsg    = cpu.Def{Name: "tcp_recvmsg", Layer: cpu.LayerTCP, Instructions: 120, CodeBytes: 1280, Why: "wait for data, copy out, window update check"}
	defTCPRcv        = cpu.Def{Name: "tcp_v4_rcv", Layer: cpu.LayerTCP, Instructions: 110, CodeBytes: 1024, Why: "header checks, checksum, connection lookup, owner check"}
	defTCPAck        = cpu.Def{Name: "tcp_ack", Layer: cpu.LayerTCP, Instructions: 120, CodeBytes: 1536, Why: "window update, free acknowledged data, RTT sample, cwnd, timers"}
	defTCPData       = cpu.Def{Name: "tcp_data", Layer: cpu.LayerTCP, Instructions: 90, CodeBytes: 1280, Why: "trim to the window, queue in order or out of order, FIN, ACK decision"}
	defTCPOutput     = cpu.Def{Name: "tcp_output", Layer: cpu.LayerTCP, Instructions: 80, CodeBytes: 1536, Why: "window, Nagle and silly-window checks, flags, per segment"}
	defTCPXmit       = cpu.Def{Name: "tcp_transmit_skb", Layer: cpu.LayerTCP, Instructions: 70, CodeBytes: 768, Why: "build the header and options, finish the checksum, hand to IP"}
	defTCPReset      = cpu.Def{Name: "tcp_v4_send_reset", Layer: cpu.LayerTCP, Instructions: 60, CodeBytes: 512, Why: "build a RST answering an unwanted segment"}
	defTCPConnReq    = cpu.Def{Name: "tcp_v4_conn_request", Layer: cpu.LayerTCP, Instructions: 150, CodeBytes: 1536, Why: "backlog check, new control block, ISN, options, SYN+ACK"}
	defTCPRexmit     = cpu.Def{Name: "tcp_retransmit_timer", Layer: cpu.LayerTCP, Instructions: 60, CodeBytes: 512, Why: "back off, collapse cwnd, resend from snd_una"}
	defTCPDelack     = cpu.Def{Name: "tcp_delack_timer", Layer: cpu.LayerTCP, Instructions: 25, CodeBytes: 128, Why: "send the owed ACK"}
	defTCPProbe      = cpu.Def{Name: "tcp_probe_timer", Layer: cpu.LayerTCP, Instructions: 35, CodeBytes: 256, Why: "zero-window probe"}
	defTCPKeepalive  = cpu.Def{Name: "tcp_keepalive_timer", Layer: cpu.LayerTCP, Instructions: 45, CodeBytes: 384, Why: "check the idle time, send a probe or drop the connection"}
	defTCPTimeWait   = cpu.Def{Name: "tcp_time_wait_kill", Layer: cpu.LayerTCP, Instructions: 40, CodeBytes: 256, Why: "unhash and free the TIME_WAIT block"}
	defTCPClose      = cpu.Def{Name: "tcp_close", Layer: cpu.LayerTCP, Instructions: 90, CodeBytes: 768, Why: "state transition, FIN or RST, orphan the control block"}
)

func (s *Stack) tcpInit() {
	s.tcp.conns = map[connKey]*tcb{}
	s.tcp.isn = s.c.Scheduler().Stream(s.k.Name() + ".tcp.isn")
	syms := s.k.Symbols()
	y := &s.tcp.sym
	syms.DefineAll([]cpu.Binding{
		{&y.listen, defSysListen}, {&y.accept, defSysAccept}, {&y.connect, defSysConnect},
		{&y.send, defSysSend}, {&y.recv, defSysRecv}, {&y.shutdown, defSysShutdown},
		{&y.setsockopt, defSysSetsockopt}, {&y.sendmsg, defTCPSendmsg}, {&y.recvmsg, defTCPRecvmsg},
		{&y.rcv, defTCPRcv}, {&y.ack, defTCPAck}, {&y.data, defTCPData}, {&y.output, defTCPOutput},
		{&y.xmit, defTCPXmit}, {&y.reset, defTCPReset}, {&y.connReq, defTCPConnReq},
		{&y.rexmtTimer, defTCPRexmit}, {&y.delackTimer, defTCPDelack}, {&y.probeTimer, defTCPProbe},
		{&y.twTimer, defTCPTimeWait}, {&y.closeSym, defTCPClose}, {&y.keepTimer, defTCPKeepalive},
		{&y.sendSkb, defTCPSendSkb}, {&y.sendAck, defTCPSendAck}, {&y.fragment, defTCPFragment},
		{&y.collapse, defTCPCollapse}, {&y.cleanRtx, defTCPCleanRtx}, {&s.sym.ipQueueXmit, defIPQueueXmit},
	})
	s.tcp.cloner = netdev.NewCloner(s.k)
	// Linux 2.2 reserves MAX_HEADER (32) + tcp_prot.max_header (128).
	s.tcp.headroom = max(tcpMaxHeader, s.linkHdr+header.IPv4MaximumHeaderSize+header.TCPMaximumHeaderSize)
}

// TCPConnInfo is a snapshot of a connection for tests and reports.
type TCPConnInfo struct {
	State                  string
	SndUna, SndNxt, SndMax uint32
	SndWnd, Cwnd, Ssthresh int
	RcvNxt, RcvAdv         uint32
	RTO, SRTT              sim.Time
	Queued, Unread         int
	ISS, IRS               uint32 // initial send and receive sequence numbers
	MSS                    int    // largest segment sent
}

// TCPConns returns a snapshot of every connection, keyed "lport>raddr:rport".
func (s *Stack) TCPConns() []TCPConnInfo {
	var out []TCPConnInfo
	for _, tp := range s.tcp.conns {
		out = append(out, tp.info())
	}
	return out
}

func (tp *tcb) info() TCPConnInfo {
	return TCPConnInfo{State: tp.state.String(), SndUna: tp.sndUna, SndNxt: tp.sndNxt, SndMax: tp.sndMax,
		SndWnd: tp.sndWnd, Cwnd: tp.cwnd, Ssthresh: tp.ssthresh, RcvNxt: tp.rcvNxt, RcvAdv: tp.rcvAdv,
		RTO: tp.rto, SRTT: tp.srtt, Queued: tp.slen, Unread: tp.rlen, ISS: tp.iss, IRS: tp.irs, MSS: tp.mss}
}

// TCPInfo returns a snapshot of the connection of descriptor fd, for
// observers (it charges nothing); false when fd is not a connection.
func (s *Stack) TCPInfo(fd int) (TCPConnInfo, bool) {
	if fd < 0 || fd >= len(s.sockets) || s.sockets[fd] == nil || s.sockets[fd].tcb == nil {
		return TCPConnInfo{}, false
	}
	return s.sockets[fd].tcb.info(), true
}

// newTCB returns a control block with its timers set up; buffers come
// with allocBuffers.
func (s *Stack) newTCB(so *Socket) *tcb {
	tp := &tcb{s: s, so: so, rto: s.p.TCPInitialRTO, ssthresh: tcpMaxWindow}
	tp.rexmt = kernel.Timer{Name: "tcp.rexmt", Func: func() { s.tcpTimer(tp, s.tcp.sym.rexmtTimer, tp.rexmtFire) }}
	tp.persist = kernel.Timer{Name: "tcp.persist", Func: func() { s.tcpTimer(tp, s.tcp.sym.probeTimer, tp.persistFire) }}
	tp.delack = kernel.Timer{Name: "tcp.delack", Func: func() { s.tcpTimer(tp, s.tcp.sym.delackTimer, tp.delackFire) }}
	tp.tw = kernel.Timer{Name: "tcp.timewait", Func: func() { s.tcpTimer(tp, s.tcp.sym.twTimer, tp.twFire) }}
	tp.keep = kernel.Timer{Name: "tcp.keepalive", Func: func() { s.tcpTimer(tp, s.tcp.sym.keepTimer, tp.keepFire) }}
	tp.rmss = s.p.MTU - 40
	if cl := int(s.p.TCPMSSCluster); cl > 0 && tp.rmss > cl {
		tp.rmss -= tp.rmss % cl // 4.4BSD tcp_mss: whole clusters
	}
	tp.mss = min(tp.rmss, 536)
	if so != nil {
		tp.opt = so.opt
	}
	return tp
}

// allocBuffers gets the receive ring from the kernel heap and sets the
// send buffer's limit; the write queue's buffers come as data is sent.
func (tp *tcb) allocBuffers(snd, rcv int) bool {
	k := tp.s.k
	tp.rbuf = k.Kmalloc(rcv)
	if tp.rbuf == 0 {
		return false
	}
	tp.scap, tp.rcap = snd, rcv
	return true
}

// freeBuffers frees the receive ring and what the write queue holds.
func (tp *tcb) freeBuffers() {
	k := tp.s.k
	for _, w := range tp.wq {
		tp.s.tcpFreeBuf(w)
	}
	clear(tp.wq)
	tp.wq = tp.wq[:0]
	if tp.rbuf != 0 {
		k.Kfree(tp.rbuf)
		tp.rbuf = 0
		if tp.rlen > 0 && tp.s.gauges.Listened() {
			tp.showGauge(0, " receive queue", "bytes", 0) // gone with the ring
		}
	}
}

func (tp *tcb) key() connKey { return connKey{tp.lport, tp.raddr, tp.rport} }

// newISS draws an initial sequence number from the host's seeded stream.
func (s *Stack) newISS() uint32 { return s.tcp.isn.Uint32() }

// lock takes ownership of tp for a system call.
func (tp *tcb) lock() { tp.owned = true }

// unlock processes the segments that arrived meanwhile, then lets go.
// The socket stays owned while they are processed, as Linux keeps it
// (2.2's __release_sock runs the backlog with bottom halves off, 2.4's
// with the owner still set): a segment that arrives during one of them
// (the receive softirq can run inside its transmission) joins the
// backlog, instead of being processed inside that transmission, before
// the connection's snd_nxt has moved past the segment being sent.
func (tp *tcb) unlock() {
	for len(tp.pending) > 0 {
		p := tp.pending[0]
		tp.pending[0] = backlogSeg{}
		tp.pending = tp.pending[1:]
		if tp.s.gauges.Listened() {
			tp.showBacklog()
		}
		tp.s.tcpProcess(tp, p.buf, p.info)
	}
	tp.owned = false
}

// sleep lets go of tp while t waits on its queue; timeout 0 waits for
// ever. It reports whether the timeout ended the wait.
func (tp *tcb) sleep(t *kernel.Thread, timeout sim.Time) bool {
	tp.unlock()
	timedOut := false
	if timeout > 0 {
		timedOut = t.SleepTimeout(&tp.wait, timeout)
	} else {
		t.Sleep(&tp.wait)
	}
	tp.lock()
	return timedOut
}

func (tp *tcb) wake() { tp.s.k.Wakeup(&tp.wait) }

// tcpTimer runs a timer's work unless a system call owns the socket, in
// which case it retries on the next tick.
func (s *Stack) tcpTimer(tp *tcb, sym *cpu.Symbol, fn func()) {
	c := s.c
	c.Enter(sym)
	defer c.Exit(sym)
	if tp.owned {
		var tm *kernel.Timer
		switch sym {
		case s.tcp.sym.rexmtTimer:
			tm = &tp.rexmt
		case s.tcp.sym.probeTimer:
			tm = &tp.persist
		case s.tcp.sym.delackTimer:
			tm = &tp.delack
		default:
			tm = &tp.tw
		}
		s.k.AddTimer(tm, 1)
		return
	}
	fn()
}

// tcpSocket finds a TCP socket.
func (s *Stack) tcpSocket(fd int) (*Socket, Errno) {
	so, e := s.socket(fd)
	if e != 0 {
		return nil, e
	}
	if so.proto != protoTCP {
		return nil, EOPNOTSUPP
	}
	return so, 0
}

// Listen makes a bound TCP socket accept connections (listen(2)); backlog
// bounds the connections waiting for Accept, handshaking ones included.
func (s *Stack) Listen(t *kernel.Thread, fd int, backlog int) (err Errno) {
	t.Syscall(s.tcp.sym.listen, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		if so.tcb != nil {
			if so.tcb.state == tcpListen {
				so.tcb.backlog = max(backlog, 1)
				return
			}
			err = EISCONN
			return
		}
		if !so.bound {
			if e := s.autobind(so); e != 0 {
				err = e
				return
			}
		}
		tp := s.newTCB(so)
		tp.state = tcpListen
		tp.lport = so.port
		tp.backlog = max(backlog, 1)
		so.tcb = tp
	})
	return err
}

// Accept waits for a connection on a listening socket (accept(2)) and
// returns its new descriptor and the peer's address.
func (s *Stack) Accept(t *kernel.Thread, fd int) (nfd int, from Addr, port uint16, err Errno) {
	return s.AcceptTimeout(t, fd, 0)
}

// AcceptTimeout is Accept that waits at most timeout for a connection
// (as SO_RCVTIMEO bounds accept(2) on Linux): ETIMEDOUT when none has
// come by then; 0 waits for ever.
func (s *Stack) AcceptTimeout(t *kernel.Thread, fd int, timeout sim.Time) (nfd int, from Addr, port uint16, err Errno) {
	nfd = -1
	t.Syscall(s.tcp.sym.accept, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		lt := so.tcb
		if lt == nil || lt.state != tcpListen {
			err = EINVAL
			return
		}
		lt.lock()
		defer lt.unlock()
		c := s.c
		deadline := c.LocalTime() + timeout
		for len(lt.acceptQ) == 0 {
			if timeout == 0 {
				lt.sleep(t, 0)
			} else {
				left := deadline - c.LocalTime()
				if left <= 0 {
					err = ETIMEDOUT
					return
				}
				lt.sleep(t, left)
			}
			if so.tcb != lt || lt.state != tcpListen {
				err = EINVAL
				return
			}
		}
		tp := lt.acceptQ[0]
		lt.acceptQ = lt.acceptQ[1:]
		lt.synQ--
		tp.parent = nil
		if nfd = s.freeFD(); nfd < 0 {
			err = EMFILE
			s.tcpAbort(tp, 0)
			return
		}
		ns := &Socket{s: s, fd: nfd, proto: protoTCP, port: tp.lport, opt: so.opt, tcb: tp}
		s.sockets[nfd] = ns
		tp.so = ns
		from, port = tp.raddr, tp.rport
	})
	return nfd, from, port, err
}

// Connect opens a connection to dst:port (connect(2)) and waits until it
// is established: ECONNREFUSED when the peer resets, ETIMEDOUT when the
// SYN goes unanswered: it is sent again tcpMaxSynRetries times, the
// retransmission timeout doubling from tcp_initial_rto, and the connect
// gives up one more timeout later (Linux's tcp_syn_retries; 127 s with
// the default 1 s). A neighbour that never answers ARP is not reported
// as EHOSTUNREACH, as Linux's arp_error_report would after a few
// seconds: the SYN waits for it, and the connect times out the same.
func (s *Stack) Connect(t *kernel.Thread, fd int, dst Addr, port uint16) (err Errno) {
	t.Syscall(s.tcp.sym.connect, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		if so.tcb != nil {
			err = EISCONN
			return
		}
		if port == 0 {
			err = EDESTADDRREQ
			return
		}
		if !s.onLink(dst) {
			s.stats.IPOutNoRoute++
			err = ENETUNREACH
			return
		}
		if !so.bound {
			if e := s.autobind(so); e != 0 {
				err = e
				return
			}
		}
		tp := s.newTCB(so)
		tp.lport, tp.raddr, tp.rport = so.port, dst, port
		if s.tcp.conns[tp.key()] != nil {
			err = EADDRINUSE
			return
		}
		if !tp.allocBuffers(so.opt.sndBuf, so.opt.rcvBuf) {
			s.stats.NoBuffers++
			err = ENOBUFS
			return
		}
		so.tcb = tp
		tp.iss = s.newISS()
		tp.sndUna, tp.sndNxt, tp.sndMax = tp.iss, tp.iss, tp.iss
		tp.sndBase = tp.iss + 1
		tp.state = tcpSynSent
		s.tcp.conns[tp.key()] = tp
		s.stats.TCPActiveOpens++
		tp.lock()
		defer tp.unlock()
		s.tcpOutput(t, tp)
		for tp.state == tcpSynSent {
			tp.sleep(t, 0)
		}
		if tp.state == tcpClosed {
			err = tp.err
			if err == 0 {
				err = ECONNREFUSED
			}
		}
	})
	return err
}

// SetOption sets a socket option (setsockopt(2)).
func (s *Stack) SetOption(t *kernel.Thread, fd int, opt SockOpt, val int) (err Errno) {
	t.Syscall(s.tcp.sym.setsockopt, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		switch opt {
		case OptNoDelay, OptQuickAck, OptKeepAlive:
			on := val != 0
			switch opt {
			case OptNoDelay:
				so.opt.noDelay = on
			case OptQuickAck:
				so.opt.quickAck = on
			case OptKeepAlive:
				so.opt.keepAlive = on
			}
			tp := so.tcb
			if tp == nil {
				return
			}
			tp.opt = so.opt
			switch {
			case opt == OptNoDelay:
				// Data Nagle was holding may go now.
				tp.lock()
				s.tcpOutput(t, tp)
				tp.unlock()
			case opt == OptKeepAlive && tp.synchronized():
				tp.startKeepAlive()
			}
		case OptSndBuf, OptRcvBuf:
			if so.tcb != nil {
				err = EISCONN
				return
			}
			if val < 1024 || (opt == OptRcvBuf && val > tcpMaxWindow) || val > kernel.MaxAlloc {
				err = EINVAL
				return
			}
			if opt == OptSndBuf {
				so.opt.sndBuf = val
			} else {
				so.opt.rcvBuf = val
			}
		default:
			err = EINVAL
		}
	})
	return err
}

// Send queues n bytes at the user address buf for sending (send(2)),
// waiting while the send buffer is full; it returns when all are queued.
func (s *Stack) Send(t *kernel.Thread, fd int, buf memory.Addr, n int) (sent int, err Errno) {
	t.Syscall(s.tcp.sym.send, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		tp := so.tcb
		if tp == nil || tp.state == tcpListen {
			err = ENOTCONN
			return
		}
		if n < 0 {
			err = EINVAL
			return
		}
		c := s.c
		c.Enter(s.tcp.sym.sendmsg)
		defer c.Exit(s.tcp.sym.sendmsg)
		tp.lock()
		defer tp.unlock()
		for sent < n {
			if tp.err != 0 {
				err = tp.err
				return
			}
			if tp.finQueued || (tp.state != tcpEstablished && tp.state != tcpCloseWait) {
				err = EPIPE
				return
			}
			room := tp.scap - tp.slen
			if room == 0 {
				tp.sleep(t, 0)
				continue
			}
			// A segment's worth at a time, each sent as the
			// window and Nagle allow before the next is copied.
			m := s.tcpQueue(tp, buf+memory.Addr(sent), min(room, n-sent))
			if m == 0 {
				// No buffer to be had: wait for acknowledged data
				// to free some, as Linux waits for memory
				// (wait_for_tcp_memory); with nothing queued no
				// ACK will come.
				if tp.slen == 0 {
					err = ENOBUFS
					return
				}
				tp.sleep(t, 0)
				continue
			}
			tp.slen += m
			sent += m
			s.tcpOutput(t, tp)
		}
	})
	if err != 0 && sent > 0 {
		err = 0
	}
	return sent, err
}

// Recv copies up to n bytes of received data to the user address buf
// (recv(2)), waiting for some; it returns 0 at end of stream. timeout 0
// waits for ever; otherwise ETIMEDOUT when nothing came.
func (s *Stack) Recv(t *kernel.Thread, fd int, buf memory.Addr, n int, timeout sim.Time) (got int, err Errno) {
	t.Syscall(s.tcp.sym.recv, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		tp := so.tcb
		if tp == nil || tp.state == tcpListen || tp.state == tcpSynSent {
			err = ENOTCONN
			return
		}
		c := s.c
		c.Enter(s.tcp.sym.recvmsg)
		defer c.Exit(s.tcp.sym.recvmsg)
		tp.lock()
		defer tp.unlock()
		deadline := c.LocalTime() + timeout
		for tp.rlen == 0 {
			if tp.eof || tp.rdShut {
				return
			}
			if tp.err != 0 {
				err = tp.err
				return
			}
			if tp.state == tcpClosed {
				return
			}
			if timeout == 0 {
				tp.sleep(t, 0)
				continue
			}
			left := deadline - c.LocalTime()
			if left <= 0 {
				err = ETIMEDOUT
				return
			}
			tp.sleep(t, left)
		}
		got = min(n, tp.rlen)
		first := min(got, tp.rcap-tp.rhead)
		s.k.Bcopy(buf, tp.rbuf+memory.Addr(tp.rhead), first)
		if got > first {
			s.k.Bcopy(buf+memory.Addr(first), tp.rbuf, got-first)
		}
		tp.rhead = (tp.rhead + got) % tp.rcap
		tp.rlen -= got
		if s.gauges.Listened() {
			tp.showReceive()
		}
		// The window may have opened enough to announce (tcp_output's
		// window-update rule decides).
		s.tcpOutput(t, tp)
	})
	return got, err
}

// Shutdown closes one or both directions of a connection (shutdown(2)):
// ShutWr sends a FIN once the queued data is out.
func (s *Stack) Shutdown(t *kernel.Thread, fd int, how ShutHow) (err Errno) {
	t.Syscall(s.tcp.sym.shutdown, func() {
		so, e := s.tcpSocket(fd)
		if e != 0 {
			err = e
			return
		}
		tp := so.tcb
		if tp == nil || tp.state == tcpListen || tp.state == tcpSynSent || tp.state == tcpClosed {
			err = ENOTCONN
			return
		}
		if how < ShutRd || how > ShutRdWr {
			err = EINVAL
			return
		}
		tp.lock()
		defer tp.unlock()
		if how != ShutWr {
			tp.rdShut = true
		}
		if how != ShutRd {
			s.tcpSendFIN(t, tp)
		}
	})
	return err
}

// tcpSendFIN queues our FIN after the data (the usrclosed transitions).
func (s *Stack) tcpSendFIN(t *kernel.Thread, tp *tcb) {
	if tp.finQueued {
		return
	}
	switch tp.state {
	case tcpEstablished, tcpSynRcvd:
		tp.state = tcpFinWait1
	case tcpCloseWait:
		tp.state = tcpLastAck
	default:
		return
	}
	tp.finQueued = true
	s.tcpOutput(t, tp)
}

// tcpCloseSocket is close(2) on a TCP socket: the descriptor goes at once,
// the connection closes in the background.
func (s *Stack) tcpCloseSocket(t *kernel.Thread, so *Socket) {
	c := s.c
	c.Enter(s.tcp.sym.closeSym)
	defer c.Exit(s.tcp.sym.closeSym)
	tp := so.tcb
	if tp == nil {
		if so.bound && s.ports[so.port] == so {
			delete(s.ports, so.port)
		}
		return
	}
	tp.lock()
	defer tp.unlock()
	tp.so = nil
	switch {
	case tp.state == tcpListen:
		for _, ch := range tp.acceptQ {
			s.tcpAbort(ch, 0)
		}
		tp.acceptQ = nil
		tp.state = tcpClosed
		tp.wake()
		s.tcpRelease(tp, so)
	case tp.state == tcpClosed || tp.state == tcpSynSent:
		s.tcpDrop(tp, 0)
		s.tcpRelease(tp, so)
	case tp.rlen > 0:
		// Unread data is lost: tell the peer (RFC 2525 section 2.17).
		s.tcpAbort(tp, 0)
		s.tcpRelease(tp, so)
	default:
		tp.rdShut = true
		tp.orphan = so
		s.tcpSendFIN(t, tp)
	}
}

// tcpRelease frees what a closed connection's socket still holds: the
// rings and the port.
func (s *Stack) tcpRelease(tp *tcb, so *Socket) {
	tp.freeBuffers()
	if so != nil && so.bound && s.ports[so.port] == so {
		delete(s.ports, so.port)
	}
}

// tcpDrop closes tp at once (tcp_close): unhashed, timers stopped, waiters
// woken with err.
func (s *Stack) tcpDrop(tp *tcb, err Errno) {
	k := s.k
	if tp.state == tcpTimeWait {
		s.stats.TCPTimeWaitEnds++
	}
	tp.state = tcpClosed
	if err != 0 && tp.err == 0 {
		tp.err = err
	}
	if x := s.tcp.conns[tp.key()]; x == tp {
		delete(s.tcp.conns, tp.key())
	}
	k.DelTimer(&tp.rexmt)
	k.DelTimer(&tp.persist)
	k.DelTimer(&tp.delack)
	k.DelTimer(&tp.tw)
	k.DelTimer(&tp.keep)
	if tp.parent != nil {
		lt := tp.parent
		lt.synQ--
		for i, x := range lt.acceptQ {
			if x == tp {
				lt.acceptQ = append(lt.acceptQ[:i], lt.acceptQ[i+1:]...)
				break
			}
		}
		tp.parent = nil
	}
	for _, p := range tp.pending {
		p.buf.Free(k)
	}
	had := len(tp.pending) > 0
	tp.pending = nil
	if had && s.gauges.Listened() {
		tp.showBacklog()
	}
	tp.wake()
	if tp.so == nil {
		// No descriptor: nobody will call close.
		s.tcpRelease(tp, tp.orphan)
		tp.orphan = nil
	}
}

// tcpAbort resets the connection (RST to the peer) and drops it.
func (s *Stack) tcpAbort(tp *tcb, err Errno) {
	switch tp.state {
	case tcpSynRcvd, tcpEstablished, tcpFinWait1, tcpFinWait2, tcpCloseWait:
		s.tcpSendReset(nil, tp.raddr, tp.lport, tp.rport, tp.sndNxt, 0, false)
	}
	s.tcpDrop(tp, err)
}
