package inet

import (
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// ICMP (RFC 792): echo requests are answered, echo replies go to the ping
// socket whose identifier they carry, and a UDP datagram for a port
// nobody listens on is answered with "port unreachable". Layer IP.

// icmpRcv handles an ICMP message (b's data at the ICMP header).
func (s *Stack) icmpRcv(b netdev.Buf, info ipHeaderInfo) {
	c := s.c
	c.Enter(s.sym.icmpRcv)
	defer c.Exit(s.sym.icmpRcv)
	s.stats.ICMPInMsgs++
	if b.Len < header.ICMPv4MinimumSize || kernel.Fold(s.k.CsumPartial(b.Addr, b.Len, 0)) != 0xFFFF {
		s.stats.ICMPInErrors++
		b.Free(s.k)
		return
	}
	var h [header.ICMPv4MinimumSize]byte
	s.read(b.Addr, h[:])
	m := header.ICMPv4(h[:])
	switch m.Type() {
	case header.ICMPv4Echo:
		s.stats.ICMPInEchos++
		if info.dst == s.addr {
			s.icmpEchoReply(b, info)
		}
		b.Free(s.k)
	case header.ICMPv4EchoReply:
		so := s.ports[m.Ident()]
		if so == nil || so.proto != protoICMP {
			b.Free(s.k)
			return
		}
		if so.queued+b.Len > int(s.p.UDPRecvBuffer) {
			b.Free(s.k)
			return
		}
		so.enqueue(dgram{buf: b, data: b.Addr, n: b.Len, from: info.src})
	default:
		b.Free(s.k)
	}
}

// icmpEchoReply answers an echo request with the same identifier,
// sequence and data, fragmented like any datagram when it exceeds the MTU.
func (s *Stack) icmpEchoReply(req netdev.Buf, info ipHeaderInfo) {
	c := s.c
	c.Enter(s.sym.icmpReply)
	defer c.Exit(s.sym.icmpReply)
	gf := func(to memory.Addr, off, size int, sum uint32) uint32 {
		sum = s.k.CsumCopy(to, req.Addr+memory.Addr(off), size, sum)
		if off > 0 {
			return sum
		}
		return s.icmpRewriteHeader(to, sum, func(m header.ICMPv4) { m.SetType(header.ICMPv4EchoReply) })
	}
	if s.buildXmit(nil, info.src, header.IPv4ProtocolICMP, req.Len, gf) {
		s.stats.ICMPOutMsgs++
		s.stats.ICMPOutEchoReps++
	}
}

// icmpUnreachable reports an undeliverable datagram to its sender: the
// error carries the datagram's IP header and its first 8 bytes of data
// (RFC 792). b's data is at the transport header.
func (s *Stack) icmpUnreachable(b netdev.Buf, info ipHeaderInfo, code uint8) {
	c := s.c
	c.Enter(s.sym.icmpReply)
	defer c.Exit(s.sym.icmpReply)
	quote := min(b.Len, 8)
	hl := info.rawLen
	n := header.ICMPv4MinimumSize + hl + quote
	out, ok := s.alloc(header.IPv4MinimumSize + n)
	if !ok {
		return
	}
	msg := out.Addr + header.IPv4MinimumSize
	// The offending datagram's header as it was received, and the first
	// 8 bytes of its data.
	s.write(msg+header.ICMPv4MinimumSize, info.raw[:hl])
	s.k.Bcopy(msg+header.ICMPv4MinimumSize+memory.Addr(hl), b.Addr, quote)
	var h [header.ICMPv4MinimumSize]byte
	m := header.ICMPv4(h[:])
	m.Encode(&header.ICMPv4Fields{Type: header.ICMPv4DstUnreachable, Code: code})
	s.write(msg, h[:])
	m.SetChecksum(^kernel.Fold(s.k.CsumPartial(msg, n, 0)))
	s.write(msg, h[:])
	id := s.ipID
	s.ipID++
	s.ipHeader(out, info.src, header.IPv4ProtocolICMP, id, 0, false)
	s.stats.ICMPOutMsgs++
	s.stats.ICMPOutDestUnreachs++
	s.ipOutput(nil, out, info.src)
}

// icmpSendEcho sends an echo request built from the user's message at
// data (n bytes, ICMP header first): the kernel sets the identifier to
// the socket's and computes the checksum, as Linux ping sockets do.
func (s *Stack) icmpSendEcho(t *kernel.Thread, so *Socket, data memory.Addr, n int, dst Addr) Errno {
	if n < header.ICMPv4MinimumSize {
		return EINVAL
	}
	if header.IPv4MinimumSize+n > maxDatagram {
		return EMSGSIZE
	}
	if !so.bound {
		if e := s.autobind(so); e != 0 {
			return e
		}
	}
	gf := func(to memory.Addr, off, size int, sum uint32) uint32 {
		sum = s.k.CsumCopy(to, data+memory.Addr(off), size, sum)
		if off > 0 {
			return sum
		}
		return s.icmpRewriteHeader(to, sum, func(m header.ICMPv4) {
			m.SetType(header.ICMPv4Echo)
			m.SetIdent(so.port)
		})
	}
	if !s.buildXmit(t, dst, header.IPv4ProtocolICMP, n, gf) {
		return ENOBUFS
	}
	s.stats.ICMPOutMsgs++
	return 0
}

// icmpRewriteHeader changes the ICMP header just copied to msg (edit) and
// writes its checksum: sum is the running sum of the whole message as
// copied, so the old header is taken out of it and the new one put in.
// It returns the new sum.
func (s *Stack) icmpRewriteHeader(msg memory.Addr, sum uint32, edit func(m header.ICMPv4)) uint32 {
	var h [header.ICMPv4MinimumSize]byte
	s.read(msg, h[:])
	m := header.ICMPv4(h[:])
	old := header.Checksum(h[:], 0)
	edit(m)
	m.SetChecksum(0)
	folded := header.ChecksumCombine(header.ChecksumCombine(kernel.Fold(sum), ^old), header.Checksum(h[:], 0))
	m.SetChecksum(^folded)
	s.write(msg, h[:])
	return uint32(folded)
}
