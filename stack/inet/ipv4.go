package inet

import (
	"simkron/cpu"
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// getfrag copies n bytes of a transport message, starting at offset off of
// the message (its header first), into dst, adding them to the running
// one's-complement sum, which it returns. Fragments are asked for from the
// highest offset down, so when off is 0 the sum holds every other byte and
// the transport can finish its checksum (Linux ip_build_xmit's getfrag).
type getfrag func(dst memory.Addr, off, n int, sum uint32) uint32

// maxDatagram is the largest IPv4 datagram (the total-length field).
const maxDatagram = 65535

// buildXmit sends a transport message of length bytes to dst as one IP
// datagram, fragmented when it exceeds the MTU. t is the sending thread.
// It returns false when no buffer could be had.
func (s *Stack) buildXmit(t *kernel.Thread, dst Addr, proto uint8, length int, gf getfrag) bool {
	c := s.c
	s.stats.IPOutRequests++
	id := s.ipID
	s.ipID++
	if header.IPv4MinimumSize+length <= s.p.MTU {
		c.Enter(s.sym.ipBuild)
		defer c.Exit(s.sym.ipBuild)
		b, ok := s.alloc(header.IPv4MinimumSize + length)
		if !ok {
			return false
		}
		gf(b.Addr+header.IPv4MinimumSize, 0, length, 0)
		s.ipHeader(b, dst, proto, id, 0, false)
		s.ipOutput(t, b, dst)
		return true
	}
	// ip_build_xmit_slow: every fragment but the last carries a multiple
	// of 8 bytes; the highest offset is built and sent first.
	maxfrag := (s.p.MTU - header.IPv4MinimumSize) &^ 7
	last := (length - 1) / maxfrag * maxfrag
	var sum uint32
	for off := last; off >= 0; off -= maxfrag {
		n := min(maxfrag, length-off)
		c.Enter(s.sym.ipBuildSlow)
		b, ok := s.alloc(header.IPv4MinimumSize + n)
		if !ok {
			c.Exit(s.sym.ipBuildSlow)
			return false
		}
		sum = gf(b.Addr+header.IPv4MinimumSize, off, n, sum)
		s.ipHeader(b, dst, proto, id, off, off+n < length)
		s.stats.IPFragCreates++
		s.ipOutput(t, b, dst)
		c.Exit(s.sym.ipBuildSlow)
	}
	s.stats.IPFragOKs++
	return true
}

// defIPQueueXmit is Linux 2.2's ip_queue_xmit (net/ipv4/ip_output.c),
// counted line by line in MIPS instructions:
//
//	rt = sk->dst_cache; NULL or obsolete?          4  (2 loads, 2 branches)
//	opt && opt->is_strictroute                     2
//	skb->dst = dst_clone(sk->dst_cache)            6  (load, test, use++, store)
//	skb_push(skb, sizeof(iphdr) + optlen)         12  (optlen 3; data, len, head check 9)
//	version/ihl, tos, frag_off, ttl, daddr,
//	  saddr, protocol, skb->nh.iph                14
//	opt && opt->optlen                             1
//	iph->tot_len = htons(skb->len)                 2  (big-endian: no swap)
//	iph->id = htons(ip_id_count++)                 5
//	dev = rt->u.dst.dev                            1
//	skb_headroom < dev->hard_header_len?           8
//	tot_len > rt->u.dst.pmtu?                      3
//	ip_dont_fragment, frag_off |= DF              11
//	ip_send_check: check = 0, ip_fast_csum over
//	  5 words (MIPS: 4 unrolled, a loop of 1),
//	  csum_fold, the store                        30
//	skb->priority = sk->priority                   2
//	skb->dst->output(skb)                          4
//	entry and exit (6 saved registers)            16
//	                                             ---
//	                                             121
//
// The firewall hook (CONFIG_FIREWALL) is not counted. The header's stores
// are charged as they are made; ip_output and the neighbour's output
// follow as for every datagram.
var defIPQueueXmit = cpu.Def{Name: "ip_queue_xmit", Layer: cpu.LayerIP, Instructions: 121, CodeBytes: 768,
	Why: "TCP's segment, in its own buffer: check the cached route, push and fill the header, MTU and DF checks, ip_send_check, hand to dst->output (counted line by line from Linux 2.2's C)"}

// ipQueueXmit sends a transport's finished segment, b's data at its
// header, whose buffer the transport allocated and filled (Linux
// ip_queue_xmit, the path of TCP): the IP header is pushed in front and
// checksummed, and the datagram goes to the neighbour; nothing is
// allocated or copied. TCP never sends a segment larger than the path
// MTU; one made before the interface's MTU was lowered (SetMTU) is
// fragmented as Linux's ip_fragment would, its slices copied into new
// buffers.
func (s *Stack) ipQueueXmit(t *kernel.Thread, b netdev.Buf, dst Addr, proto uint8) {
	c := s.c
	c.Enter(s.sym.ipQueueXmit)
	defer c.Exit(s.sym.ipQueueXmit)
	if header.IPv4MinimumSize+b.Len > s.p.MTU {
		s.buildXmit(t, dst, proto, b.Len, func(to memory.Addr, off, n int, _ uint32) uint32 {
			s.k.Bcopy(to, b.Addr+memory.Addr(off), n)
			return 0
		})
		b.Free(s.k)
		return
	}
	s.stats.IPOutRequests++
	id := s.ipID
	s.ipID++
	b.Push(header.IPv4MinimumSize)
	s.ipHeader(b, dst, proto, id, 0, false)
	s.ipOutput(t, b, dst)
}

// ipHeader writes the 20-byte header in front of the data in b (whose
// data starts where the header goes).
func (s *Stack) ipHeader(b netdev.Buf, dst Addr, proto uint8, id uint16, off int, more bool) {
	var h [header.IPv4MinimumSize]byte
	v := header.IPv4(h[:])
	var flags uint16
	if more {
		flags = header.IPv4FlagMoreFragments
	}
	v.Encode(&header.IPv4Fields{
		TotalLength: uint16(b.Len), ID: id, Flags: flags, FragmentOffset: uint16(off),
		TTL: uint8(s.p.TTL), Protocol: proto, Src: s.addr, Dst: dst,
	})
	v.SetChecksum(v.CalculateChecksum())
	s.write(b.Addr, h[:])
}

// ipOutput hands a finished datagram (or fragment) to the neighbour layer.
func (s *Stack) ipOutput(t *kernel.Thread, b netdev.Buf, dst Addr) {
	c := s.c
	c.Enter(s.sym.ipOutput)
	defer c.Exit(s.sym.ipOutput)
	if dst != broadcastIP && !s.onLink(dst) {
		s.stats.IPOutNoRoute++
		b.Free(s.k)
		return
	}
	if s.framer != nil {
		s.framedOutput(t, b, dst)
		return
	}
	s.neighOutput(t, b, dst)
}

// ipHeaderInfo is what the transports need of a received datagram: the
// addresses and protocol, and the header as received (for ICMP errors,
// which quote it).
type ipHeaderInfo struct {
	src, dst Addr
	proto    uint8
	raw      [header.IPv4MaximumHeaderSize]byte
	rawLen   int
}

// ipRcv is the IPv4 receive path (ip_rcv): the frame in b, Ethernet
// header first.
func (s *Stack) ipRcv(b netdev.Buf) {
	c := s.c
	c.Enter(s.sym.ipRcv)
	defer c.Exit(s.sym.ipRcv)
	s.stats.IPInReceives++
	if b.Proto == 0 {
		b.Pull(header.EthernetHeaderLen)
	}
	if b.Len < header.IPv4MinimumSize {
		s.stats.IPInTruncated++
		b.Free(s.k)
		return
	}
	var hb [header.IPv4MaximumHeaderSize]byte
	s.read(b.Addr, hb[:header.IPv4MinimumSize])
	hl := int(hb[0]&0x0f) * 4
	if hl > header.IPv4MinimumSize && hl <= b.Len {
		s.read(b.Addr+header.IPv4MinimumSize, hb[header.IPv4MinimumSize:hl])
	}
	v := header.IPv4(hb[:max(hl, header.IPv4MinimumSize)])
	if hl < header.IPv4MinimumSize || !v.IsValid(b.Len) {
		if hl >= header.IPv4MinimumSize && int(v.TotalLength()) > b.Len {
			s.stats.IPInTruncated++
		} else {
			s.stats.IPInHdrErrors++
		}
		b.Free(s.k)
		return
	}
	if !v.IsChecksumValid() {
		s.stats.IPInBadChecksum++
		b.Free(s.k)
		return
	}
	if d := v.Dst(); d != s.addr && d != broadcastIP && !s.isSubnetBroadcast(d) {
		s.stats.IPInAddrErrors++
		b.Free(s.k)
		return
	}
	b.Len = int(v.TotalLength()) // drop link-layer padding
	info := ipHeaderInfo{src: v.Src(), dst: v.Dst(), proto: v.Protocol(), rawLen: hl}
	copy(info.raw[:], hb[:hl])
	if v.More() || v.FragmentOffset() != 0 {
		s.stats.IPReasmReqds++
		whole, ok := s.reasm.add(b, v, hl)
		if !ok {
			return
		}
		b, hl = whole, header.IPv4MinimumSize
	}
	b.Pull(hl)
	s.deliver(b, info)
}

// deliver hands a datagram's payload (b's data) to its protocol.
func (s *Stack) deliver(b netdev.Buf, info ipHeaderInfo) {
	switch info.proto {
	case header.IPv4ProtocolUDP:
		s.stats.IPInDelivers++
		s.udpRcv(b, info)
	case header.IPv4ProtocolICMP:
		s.stats.IPInDelivers++
		s.icmpRcv(b, info)
	case header.IPv4ProtocolTCP:
		s.stats.IPInDelivers++
		s.tcpRcv(b, info)
	default:
		s.stats.IPInUnknownProtos++
		b.Free(s.k)
	}
}
