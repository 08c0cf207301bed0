// Package inet is the Internet protocol family of the simulated kernel:
// Ethernet II framing, ARP, IPv4 (with fragmentation and reassembly), ICMP
// echo and errors, UDP, TCP (tcp.go), and the socket calls simulated
// programs use. It runs on the kernel (stack/kernel) over the device layer
// (stack/netdev); packets live in kernel buffers in simulated memory and
// every function is a symbol of its layer: APPL (socket calls), UDP, TCP,
// IP (ARP and ICMP too), with the device layer below in DEV.
//
// Data moves as a Linux 2.x kernel moves it: sendto copies the user's data
// into kernel buffers while checksumming it (csum_partial_copy, called
// from the IP output path as ip_build_xmit's getfrag), a datagram longer
// than the MTU is cut into fragments built from the highest offset down so
// the first fragment, which carries the finished UDP checksum, leaves
// last; TCP copies and checksums into buffers of its own, kept for
// retransmission, and hands IP a clone of each segment's, to which
// ip_queue_xmit only adds its header (tcp.go); on receive the IP layer
// reassembles fragments into one buffer, UDP verifies the checksum and
// recvfrom copies the data out.
//
// The receive path never returns errors: every packet it drops bumps a
// named counter in Stats.
//
// The interface is Ethernet (with ARP) or a device that frames packets
// itself from a static table (netdev.Framer: ATM, classical IP over AAL5
// with RFC 2684 LLC/SNAP), which the receive path learns from Buf.Proto.
//
// Simplifications: one interface per host and no routing (every
// destination is on the link, or reached through the configured gateway's
// MAC); IP options are accepted and skipped, never acted on; no IP
// forwarding; ARP entries do not go stale between confirmations (they
// expire after a fixed time); the reassembly memory bound evicts whole
// datagrams oldest first.
package inet

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

// Addr is an IPv4 address.
type Addr = [4]byte

// Params configures a host's Internet layer.
type Params struct {
	MTU            int      `toml:"mtu" min:"68" max:"65535" help:"IP MTU of the interface (1500 on Ethernet)"`
	TTL            int      `toml:"ttl" min:"1" max:"255" help:"time to live of outgoing datagrams"`
	ARPTimeout     sim.Time `toml:"arp_timeout" min:"1s" help:"how long a resolved neighbour stays in the ARP cache"`
	ARPRetry       sim.Time `toml:"arp_retry" min:"10ms" help:"time between ARP requests for an unresolved neighbour"`
	ARPTries       int      `toml:"arp_tries" min:"1" max:"100" help:"ARP requests before the packets waiting for the neighbour are dropped"`
	ARPQueue       int      `toml:"arp_queue" min:"1" max:"1000" help:"packets kept per unresolved neighbour (Linux: 3)"`
	FragTimeout    sim.Time `toml:"frag_timeout" min:"1s" help:"how long fragments wait for the rest of their datagram (Linux ipfrag_time: 30 s)"`
	FragMemory     sim.Size `toml:"frag_memory" min:"4KiB" help:"bytes of fragments held for reassembly at most (Linux ipfrag_high_thresh: 256 KiB)"`
	UDPRecvBuffer  sim.Size `toml:"udp_rcvbuf" min:"1KiB" help:"bytes of datagrams a UDP socket holds unread before it drops (SO_RCVBUF)"`
	TCPSendBuffer  sim.Size `toml:"tcp_sndbuf" min:"1KiB" max:"1MiB" help:"bytes a TCP socket holds unacknowledged or unsent (SO_SNDBUF)"`
	TCPRecvBuffer  sim.Size `toml:"tcp_rcvbuf" min:"1KiB" max:"64KiB" help:"bytes a TCP socket holds unread; bounds the advertised window (SO_RCVBUF)"`
	TCPDelAck      sim.Time `toml:"tcp_delack" min:"1ms" max:"500ms" help:"longest delay of an ACK for in-order data (RFC 1122 4.2.3.2: under 0.5 s; BSD 200 ms)"`
	TCPDelAckStyle string   `toml:"tcp_delack_style" help:"when held ACKs go: \"linux\" (a per-connection timer of tcp_delack, quick ACKs at connection start, an ACK at once when more than one full-sized segment is unacknowledged) or \"bsd\" (4.4BSD: every tcp_delack from boot a host-wide fast timer sends every held ACK; before it only a window update after a read, or data going the other way, carries one)"`
	TCPMSSCluster  sim.Size `toml:"tcp_mss_cluster" max:"64KiB" help:"4.4BSD tcp_mss rounding: an MSS larger than this is rounded down to a multiple of it (MCLBYTES, 2048 in 4.4BSD, so MTU 4352 gives 4096); 0 keeps MTU - 40"`
	TCPKeepIdle    sim.Time `toml:"tcp_keepalive_time" min:"1s" help:"idle time before a connection with SO_KEEPALIVE probes its peer (RFC 1122 4.2.3.6: at least 2 hours)"`
	TCPKeepIntvl   sim.Time `toml:"tcp_keepalive_intvl" min:"100ms" help:"time between unanswered keep-alive probes (Linux: 75 s)"`
	TCPKeepProbes  int      `toml:"tcp_keepalive_probes" min:"1" max:"100" help:"unanswered keep-alive probes before the connection is dropped with ETIMEDOUT (Linux: 9)"`
	TCPMSL         sim.Time `toml:"tcp_msl" min:"1ms" help:"maximum segment lifetime; TIME_WAIT lasts twice this (RFC 793: 2 min)"`
	TCPMinRTO      sim.Time `toml:"tcp_min_rto" min:"1ms" help:"lower bound of the retransmission timeout's variance term: RTO = SRTT + max(tcp_min_rto, 4 RTTVAR) (Linux TCP_RTO_MIN: 200 ms)"`
	TCPInitialRTO  sim.Time `toml:"tcp_initial_rto" min:"10ms" help:"retransmission timeout before the first RTT sample (RFC 6298 2.1: 1 s)"`
}

// DefaultParams returns Linux 2.2-like settings.
func DefaultParams() Params {
	return Params{
		MTU: 1500, TTL: 64,
		ARPTimeout: 60 * sim.Second, ARPRetry: sim.Second, ARPTries: 3, ARPQueue: 3,
		FragTimeout: 30 * sim.Second, FragMemory: 256 * sim.KiB,
		UDPRecvBuffer: 64 * sim.KiB,
		TCPSendBuffer: 32 * sim.KiB, TCPRecvBuffer: 32 * sim.KiB,
		TCPDelAck: 200 * sim.Millisecond, TCPMSL: 30 * sim.Second,
		TCPMinRTO: 200 * sim.Millisecond, TCPInitialRTO: sim.Second,
		TCPDelAckStyle: DelAckLinux,
		TCPKeepIdle:    2 * 3600 * sim.Second, TCPKeepIntvl: 75 * sim.Second, TCPKeepProbes: 9,
	}
}

// Delayed-ACK styles (Params.TCPDelAckStyle).
const (
	DelAckLinux = "linux"
	DelAckBSD   = "bsd"
)

// Validate checks what the field bounds cannot.
func (p Params) Validate() error {
	if p.TCPDelAckStyle != DelAckLinux && p.TCPDelAckStyle != DelAckBSD {
		return fmt.Errorf("tcp_delack_style: %q is not a style: want %q or %q", p.TCPDelAckStyle, DelAckLinux, DelAckBSD)
	}
	return nil
}

// Stats counts the Internet layer's events; every drop has a counter.
type Stats struct {
	IPInReceives        uint64 `stat:"ip_in_receives" help:"IP datagrams received from the device layer, errors included (RFC 1213 ipInReceives)"`
	IPInDelivers        uint64 `stat:"ip_in_delivers" help:"datagrams delivered to ICMP, UDP or TCP (ipInDelivers)"`
	IPOutRequests       uint64 `stat:"ip_out_requests" help:"datagrams the host's protocols handed to IP to send (ipOutRequests)"`
	IPInHdrErrors       uint64 `stat:"ip_in_hdr_errors" help:"datagrams dropped: a bad IP header (ipInHdrErrors)"`
	IPInBadChecksum     uint64 `stat:"ip_in_bad_checksum" help:"datagrams dropped: a bad IP header checksum"`
	IPInAddrErrors      uint64 `stat:"ip_in_addr_errors" help:"datagrams dropped: for another host (no forwarding; ipInAddrErrors)"`
	IPInUnknownProtos   uint64 `stat:"ip_in_unknown_protos" help:"datagrams dropped: a protocol the host does not run (ipInUnknownProtos)"`
	IPInTruncated       uint64 `stat:"ip_in_truncated" help:"datagrams dropped: shorter than their header or total length"`
	IPFragCreates       uint64 `stat:"ip_frag_creates" help:"fragments made from datagrams larger than the MTU (ipFragCreates)"`
	IPFragOKs           uint64 `stat:"ip_frag_oks" help:"datagrams sent in fragments (ipFragOKs)"`
	IPReasmReqds        uint64 `stat:"ip_reasm_reqds" help:"fragments received for reassembly (ipReasmReqds)"`
	IPReasmOKs          uint64 `stat:"ip_reasm_oks" help:"datagrams reassembled (ipReasmOKs)"`
	IPReasmFails        uint64 `stat:"ip_reasm_fails" help:"reassemblies that failed: inconsistent fragments, no buffer (ipReasmFails)"`
	IPReasmTimeouts     uint64 `stat:"ip_reasm_timeouts" help:"reassemblies given up: the rest did not come within frag_timeout"`
	IPReasmOverlaps     uint64 `stat:"ip_reasm_overlaps" help:"fragments trimmed or dropped for overlapping ones already held"`
	IPReasmEvicted      uint64 `stat:"ip_reasm_evicted" help:"datagrams in reassembly evicted, oldest first, to stay within frag_memory"`
	IPOutNoRoute        uint64 `stat:"ip_out_no_route" help:"datagrams not sent: the destination is off the link, or no VC leads to it (ipOutNoRoutes)"`
	ARPRequestsSent     uint64 `stat:"arp_requests_sent" help:"ARP requests sent"`
	ARPRepliesSent      uint64 `stat:"arp_replies_sent" help:"ARP replies sent"`
	ARPRequestsRecvd    uint64 `stat:"arp_requests_recvd" help:"ARP requests received"`
	ARPRepliesRecvd     uint64 `stat:"arp_replies_recvd" help:"ARP replies received"`
	ARPBadPackets       uint64 `stat:"arp_bad_packets" help:"ARP packets dropped: too short, malformed or of another operation"`
	ARPQueueDrops       uint64 `stat:"arp_queue_drops" help:"packets dropped while waiting for a neighbour's address: its queue full, or the address never came"`
	ARPUnresolved       uint64 `stat:"arp_unresolved" help:"neighbours given up on after arp_tries requests"`
	ICMPInMsgs          uint64 `stat:"icmp_in_msgs" help:"ICMP messages received (icmpInMsgs)"`
	ICMPInErrors        uint64 `stat:"icmp_in_errors" help:"ICMP messages dropped: too short or a bad checksum (icmpInErrors)"`
	ICMPInEchos         uint64 `stat:"icmp_in_echos" help:"echo requests received (icmpInEchos)"`
	ICMPOutMsgs         uint64 `stat:"icmp_out_msgs" help:"ICMP messages sent (icmpOutMsgs)"`
	ICMPOutEchoReps     uint64 `stat:"icmp_out_echo_reps" help:"echo replies sent (icmpOutEchoReps)"`
	ICMPOutDestUnreachs uint64 `stat:"icmp_out_dest_unreachs" help:"destination-unreachable messages sent (icmpOutDestUnreachs)"`
	UDPInDatagrams      uint64 `stat:"udp_in_datagrams" help:"UDP datagrams queued on a socket (udpInDatagrams)"`
	UDPNoPorts          uint64 `stat:"udp_no_ports" help:"UDP datagrams for a port nobody has bound (udpNoPorts)"`
	UDPInErrors         uint64 `stat:"udp_in_errors" help:"UDP datagrams dropped: a bad header, checksum or length (udpInErrors)"`
	UDPInBadChecksum    uint64 `stat:"udp_in_bad_checksum" help:"UDP datagrams dropped: a bad checksum"`
	UDPRcvbufErrors     uint64 `stat:"udp_rcvbuf_errors" help:"UDP datagrams dropped: the socket's receive buffer full (udp_rcvbuf)"`
	UDPOutDatagrams     uint64 `stat:"udp_out_datagrams" help:"UDP datagrams sent (udpOutDatagrams)"`
	NoBuffers           uint64 `stat:"no_buffers" help:"packets not sent or built: no kernel buffer, or the device queue full where the sender cannot wait"`
	// TCP (RFC 1213 tcp group, plus the events behind the timing).
	TCPActiveOpens   uint64 `stat:"tcp_active_opens" help:"connections opened by connect (tcpActiveOpens)"`
	TCPPassiveOpens  uint64 `stat:"tcp_passive_opens" help:"connections opened by a listening socket (tcpPassiveOpens)"`
	TCPAttemptFails  uint64 `stat:"tcp_attempt_fails" help:"connects that failed: reset, or the SYN retries ran out (tcpAttemptFails)"`
	TCPEstabResets   uint64 `stat:"tcp_estab_resets" help:"established connections reset (tcpEstabResets)"`
	TCPInSegs        uint64 `stat:"tcp_in_segs" help:"TCP segments received, errors included (tcpInSegs)"`
	TCPOutSegs       uint64 `stat:"tcp_out_segs" help:"TCP segments sent, retransmissions excluded (tcpOutSegs)"`
	TCPRetransSegs   uint64 `stat:"tcp_retrans_segs" help:"TCP segments sent again (tcpRetransSegs)"`
	TCPInErrs        uint64 `stat:"tcp_in_errs" help:"TCP segments dropped: too short, for another address or a bad checksum (tcpInErrs)"`
	TCPInBadChecksum uint64 `stat:"tcp_in_bad_checksum" help:"TCP segments dropped: a bad checksum"`
	TCPOutRsts       uint64 `stat:"tcp_out_rsts" help:"resets sent (tcpOutRsts)"`
	TCPNoPorts       uint64 `stat:"tcp_no_ports" help:"segments for a port nobody listens on, answered with a reset"`
	TCPListenDrops   uint64 `stat:"tcp_listen_drops" help:"connection requests dropped: the listener's queue full or closed"`
	TCPFastRetrans   uint64 `stat:"tcp_fast_retrans" help:"fast retransmissions after three duplicate ACKs"`
	TCPTimeouts      uint64 `stat:"tcp_timeouts" help:"retransmission timeouts"`
	TCPDelayedAcks   uint64 `stat:"tcp_delayed_acks" help:"ACKs held back by the delayed-ACK rule"`
	TCPOutOfOrder    uint64 `stat:"tcp_out_of_order" help:"segments received out of order and kept for later"`
	TCPDupData       uint64 `stat:"tcp_dup_data" help:"segments whose data had all been received before"`
	TCPBacklogged    uint64 `stat:"tcp_backlogged" help:"segments queued on a socket's backlog while a call held it"`
	TCPTimeWaitEnds  uint64 `stat:"tcp_time_wait_ends" help:"connections that left TIME_WAIT after twice the MSL"`
	TCPPersistProbes uint64 `stat:"tcp_persist_probes" help:"window probes sent by the persist timer"`
	TCPOOWAckLimited uint64 `stat:"tcp_oow_ack_limited" help:"ACKs to out-of-window segments not sent, to limit their rate"`
	// TCPSendHeld counts tcp_output holding back data the window allowed
	// (Nagle or sender silly-window avoidance); TCPDelAckTimeouts the
	// ACKs the delayed-ACK timer sent.
	TCPSendHeld       uint64 `stat:"tcp_send_held" help:"times tcp_output held back data the window allowed (Nagle or sender silly-window avoidance)"`
	TCPDelAckTimeouts uint64 `stat:"tcp_del_ack_timeouts" help:"ACKs the delayed-ACK timer sent"`
	// Keep-alive probes sent, and connections they found dead.
	TCPKeepAliveProbes uint64 `stat:"tcp_keep_alive_probes" help:"keep-alive probes sent"`
	TCPKeepAliveDrops  uint64 `stat:"tcp_keep_alive_drops" help:"connections dropped because their keep-alive probes went unanswered"`
}

// Symbols of the family, with their costs in instructions per call
// (estimated from the C of Linux 2.2's net/ipv4; copies, checksums and
// header bytes are charged as they happen).
var (
	defSysSocket   = cpu.Def{Name: "sys_socket", Layer: cpu.LayerAPPL, Instructions: 150, CodeBytes: 512, Why: "allocate the socket and its file descriptor"}
	defSysBind     = cpu.Def{Name: "sys_bind", Layer: cpu.LayerAPPL, Instructions: 90, CodeBytes: 384, Why: "check the address, claim the port"}
	defSysSendto   = cpu.Def{Name: "sys_sendto", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, copy in the address, call the protocol (sock_sendmsg)"}
	defSysRecvfrom = cpu.Def{Name: "sys_recvfrom", Layer: cpu.LayerAPPL, Instructions: 70, CodeBytes: 384, Why: "find the socket, call the protocol, copy out the address"}
	defSysClose    = cpu.Def{Name: "sys_close", Layer: cpu.LayerAPPL, Instructions: 80, CodeBytes: 384, Why: "release the port, free queued datagrams"}
	defUDPSendmsg  = cpu.Def{Name: "udp_sendmsg", Layer: cpu.LayerUDP, Instructions: 110, CodeBytes: 768, Why: "checks, autobind, route, set up the UDP header and getfrag"}
	defUDPRecvmsg  = cpu.Def{Name: "udp_recvmsg", Layer: cpu.LayerUDP, Instructions: 80, CodeBytes: 512, Why: "dequeue, copy out, fill the address, free"}
	defUDPRcv      = cpu.Def{Name: "udp_rcv", Layer: cpu.LayerUDP, Instructions: 90, CodeBytes: 640, Why: "header checks, checksum, port lookup, queue on the socket, wake"}
	defIPBuild     = cpu.Def{Name: "ip_build_xmit", Layer: cpu.LayerIP, Instructions: 120, CodeBytes: 896, Why: "allocate the buffer, reserve headers, getfrag, build the IP header"}
	defIPBuildSlow = cpu.Def{Name: "ip_build_xmit_slow", Layer: cpu.LayerIP, Instructions: 100, CodeBytes: 1024, Why: "per fragment: allocate, getfrag the slice, IP header with offset and MF"}
	defIPOutput    = cpu.Def{Name: "ip_output", Layer: cpu.LayerIP, Instructions: 40, CodeBytes: 256, Why: "count the request, set the device and protocol, hand to the neighbour (ip_output, ip_finish_output; the header checksum is done by the caller)"}
	defIPRcv       = cpu.Def{Name: "ip_rcv", Layer: cpu.LayerIP, Instructions: 100, CodeBytes: 768, Why: "header checks, checksum, address check, protocol dispatch"}
	defIPDefrag    = cpu.Def{Name: "ip_defrag", Layer: cpu.LayerIP, Instructions: 150, CodeBytes: 1536, Why: "find the queue, insert the fragment, trim overlaps, check completeness"}
	defIPGlue      = cpu.Def{Name: "ip_glue", Layer: cpu.LayerIP, Instructions: 60, CodeBytes: 512, Why: "allocate the datagram, copy every fragment in, free them"}
	defIPExpire    = cpu.Def{Name: "ip_expire", Layer: cpu.LayerIP, Instructions: 40, CodeBytes: 256, Why: "free a timed-out reassembly queue"}
	defNeighOutput = cpu.Def{Name: "neigh_resolve_output", Layer: cpu.LayerIP, Instructions: 45, CodeBytes: 384, Why: "ARP cache lookup, Ethernet header, queue to the device"}
	defARPRcv      = cpu.Def{Name: "arp_rcv", Layer: cpu.LayerIP, Instructions: 90, CodeBytes: 768, Why: "checks, cache update, reply to requests for us, send queued packets"}
	defARPSend     = cpu.Def{Name: "arp_send", Layer: cpu.LayerIP, Instructions: 60, CodeBytes: 384, Why: "build and queue a request or reply"}
	defARPTimer    = cpu.Def{Name: "arp_timer", Layer: cpu.LayerIP, Instructions: 30, CodeBytes: 256, Why: "resend a request or give up"}
	defICMPRcv     = cpu.Def{Name: "icmp_rcv", Layer: cpu.LayerIP, Instructions: 80, CodeBytes: 640, Why: "checks, checksum, dispatch by type"}
	defICMPReply   = cpu.Def{Name: "icmp_reply", Layer: cpu.LayerIP, Instructions: 90, CodeBytes: 640, Why: "build an echo reply or error, checksum, send"}
)

// Stack is one host's Internet layer.
type Stack struct {
	k   *kernel.Kernel
	c   *cpu.CPU
	nd  *netdev.Stack
	dev int // device queue index
	// framer is the device when its link layer is not Ethernet (ATM):
	// it frames datagrams itself from a static table, and there is no
	// ARP. linkHdr is the link header IP leaves room for: 14 on
	// Ethernet, the framer's HeaderLen otherwise.
	framer  netdev.Framer
	linkHdr int
	p       Params
	mtu0    int // the configured MTU, before SetMTU
	addr    Addr
	mask    Addr
	stats   Stats

	arp   arpCache
	ipID  uint16
	reasm reassembler

	ports    map[uint16]*Socket
	nextPort uint16
	sockets  []*Socket // by file descriptor

	sym struct {
		socket, bind, sendto, recvfrom, close                *cpu.Symbol
		udpSend, udpRecv, udpRcv                             *cpu.Symbol
		ipBuild, ipBuildSlow, ipOutput, ipRcv                *cpu.Symbol
		ipQueueXmit                                          *cpu.Symbol
		ipDefrag, ipGlue, ipExpire                           *cpu.Symbol
		neigh, arpRcv, arpSend, arpTimer, icmpRcv, icmpReply *cpu.Symbol
	}
	tcp tcpStack

	// Delivered is the trace source of the datagrams UDP queues on a
	// socket for a program, fired with the buffer that holds one (its IP
	// header at Addr, as IP handed it up). A listener only looks.
	Delivered trace.Source[netdev.Buf]
	// gauges fires the sockets' queues' lengths (Gauges).
	gauges trace.Source[trace.Gauge]
}

var _ trace.Gauged = (*Stack)(nil)

// Gauges implements trace.Gauged: it fires, whenever one changes, the
// length of a UDP socket's receive queue ("udp 7 receive queue", in
// datagrams), of a TCP connection's receive buffer (the bytes a program
// has not read: "tcp 5001-10.0.0.1:1025 receive queue", its local port,
// the peer's address and port) and of its backlog (the segments that
// arrived while a call held the socket: "tcp 5001-10.0.0.1:1025
// backlog"), at the time the core has charged to. A connection's receive
// queue shows 0 when it ends, its buffer freed.
func (s *Stack) Gauges() *trace.Source[trace.Gauge] { return &s.gauges }

// New attaches the Internet layer to device dev of the host's device layer,
// with address addr/mask.
func New(k *kernel.Kernel, nd *netdev.Stack, dev int, addr, mask Addr, p Params) (*Stack, error) {
	d := nd.Device(dev)
	if p.MTU > d.MTU() {
		return nil, fmt.Errorf("mtu: %d is larger than device %s's %d", p.MTU, d.Name(), d.MTU())
	}
	s := &Stack{k: k, c: k.CPU(), nd: nd, dev: dev, p: p, mtu0: p.MTU, addr: addr, mask: mask,
		ports: map[uint16]*Socket{}, nextPort: 32768, ipID: 1, linkHdr: header.EthernetHeaderLen}
	if f, ok := d.(netdev.Framer); ok {
		s.framer, s.linkHdr = f, f.HeaderLen()
	}
	syms := k.Symbols()
	syms.DefineAll([]cpu.Binding{
		{&s.sym.socket, defSysSocket}, {&s.sym.bind, defSysBind}, {&s.sym.sendto, defSysSendto},
		{&s.sym.recvfrom, defSysRecvfrom}, {&s.sym.close, defSysClose},
		{&s.sym.udpSend, defUDPSendmsg}, {&s.sym.udpRecv, defUDPRecvmsg}, {&s.sym.udpRcv, defUDPRcv},
		{&s.sym.ipBuild, defIPBuild}, {&s.sym.ipBuildSlow, defIPBuildSlow}, {&s.sym.ipOutput, defIPOutput},
		{&s.sym.ipRcv, defIPRcv}, {&s.sym.ipDefrag, defIPDefrag}, {&s.sym.ipGlue, defIPGlue},
		{&s.sym.ipExpire, defIPExpire}, {&s.sym.neigh, defNeighOutput}, {&s.sym.arpRcv, defARPRcv},
		{&s.sym.arpSend, defARPSend}, {&s.sym.arpTimer, defARPTimer}, {&s.sym.icmpRcv, defICMPRcv},
		{&s.sym.icmpReply, defICMPReply},
	})
	s.arp.init(s)
	s.reasm.init(s)
	s.tcpInit()
	if err := nd.Register(header.EtherTypeIPv4, s.ipRcv); err != nil {
		return nil, err
	}
	if s.framer != nil {
		return s, nil // no ARP: the device's table maps addresses
	}
	if err := nd.Register(header.EtherTypeARP, s.arpRcv); err != nil {
		return nil, err
	}
	return s, nil
}

// mac returns the interface's address; the driver learns it from the card
// when it starts, after the stack is built.
func (s *Stack) mac() [6]byte { return s.nd.Device(s.dev).MAC() }

// Addr returns the host's address.
func (s *Stack) Addr() Addr { return s.addr }

// Stats returns the counters.
func (s *Stack) Stats() Stats { return s.stats }

// Params returns the parameters.
func (s *Stack) Params() Params { return s.p }

// DeviceMTU returns the largest MTU the interface's device carries.
func (s *Stack) DeviceMTU() int { return s.nd.Device(s.dev).MTU() }

// ConfiguredMTU returns the MTU the host was built with.
func (s *Stack) ConfiguredMTU() int { return s.mtu0 }

// SetMTU changes the interface's MTU, as `ifconfig mtu` would between
// runs: datagrams built from now on and connections opened from now on use
// it. It may not exceed what the device carries.
func (s *Stack) SetMTU(mtu int) error {
	d := s.nd.Device(s.dev)
	if mtu < 68 || mtu > d.MTU() {
		return fmt.Errorf("mtu %d: device %s carries 68 to %d", mtu, d.Name(), d.MTU())
	}
	s.p.MTU = mtu
	return nil
}

// AddNeighbour puts a permanent entry in the ARP cache, as `arp -s` does;
// measurements that must not include address resolution use it.
func (s *Stack) AddNeighbour(ip Addr, mac [6]byte) { s.arp.static(ip, mac) }

// onLink reports whether dst is on the interface's subnet or broadcast.
func (s *Stack) onLink(dst Addr) bool {
	for i := range dst {
		if dst[i]&s.mask[i] != s.addr[i]&s.mask[i] {
			return false
		}
	}
	return true
}

// read copies n bytes of a buffer into a Go slice, charging the loads: a
// header being examined.
func (s *Stack) read(a memory.Addr, p []byte) { s.c.Read(a, p) }

// write stores header bytes into a buffer, charging the stores.
func (s *Stack) write(a memory.Addr, p []byte) { s.c.Write(a, p) }

// alloc returns a buffer for size bytes of data after headroom for the
// link and IP headers, or counts the failure.
func (s *Stack) alloc(size int) (netdev.Buf, bool) {
	b, ok := netdev.Alloc(s.k, s.linkHdr+header.IPv4MaximumHeaderSize, size)
	if !ok {
		s.stats.NoBuffers++
	}
	return b, ok
}
