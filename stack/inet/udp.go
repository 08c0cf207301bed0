package inet

import (
	"simkron/memory"
	"simkron/stack/header"
	"simkron/stack/kernel"
	"simkron/stack/netdev"
)

// udpSendmsg sends n bytes at user address data from socket so to
// dst:port (RFC 768). The payload is copied and checksummed by getfrag as
// IP builds each fragment; the header goes in last, with the checksum of
// everything.
func (s *Stack) udpSendmsg(t *kernel.Thread, so *Socket, data memory.Addr, n int, dst Addr, port uint16) Errno {
	c := s.c
	c.Enter(s.sym.udpSend)
	defer c.Exit(s.sym.udpSend)
	length := header.UDPMinimumSize + n
	if header.IPv4MinimumSize+length > maxDatagram {
		return EMSGSIZE
	}
	if dst != broadcastIP && !s.onLink(dst) {
		s.stats.IPOutNoRoute++
		return ENETUNREACH
	}
	if !so.bound {
		if e := s.autobind(so); e != 0 {
			return e
		}
	}
	gf := func(to memory.Addr, off, size int, sum uint32) uint32 {
		if off > 0 {
			return s.k.CsumCopy(to, data+memory.Addr(off-header.UDPMinimumSize), size, sum)
		}
		sum = s.k.CsumCopy(to+header.UDPMinimumSize, data, size-header.UDPMinimumSize, sum)
		var h [header.UDPMinimumSize]byte
		u := header.UDP(h[:])
		u.Encode(&header.UDPFields{SrcPort: so.port, DstPort: port, Length: uint16(length)})
		total := header.ChecksumCombine(kernel.Fold(sum), header.PseudoHeaderChecksum(header.IPv4ProtocolUDP, s.addr, dst, uint16(length)))
		u.SetChecksum(header.UDPWireChecksum(u.HeaderSum(total)))
		s.write(to, h[:])
		return sum
	}
	if !s.buildXmit(t, dst, header.IPv4ProtocolUDP, length, gf) {
		return ENOBUFS
	}
	s.stats.UDPOutDatagrams++
	return 0
}

// udpRcv is the UDP input path (b's data at the UDP header).
func (s *Stack) udpRcv(b netdev.Buf, info ipHeaderInfo) {
	c := s.c
	c.Enter(s.sym.udpRcv)
	defer c.Exit(s.sym.udpRcv)
	if b.Len < header.UDPMinimumSize {
		s.stats.UDPInErrors++
		b.Free(s.k)
		return
	}
	var h [header.UDPMinimumSize]byte
	s.read(b.Addr, h[:])
	u := header.UDP(h[:])
	if !u.IsValid(b.Len) {
		s.stats.UDPInErrors++
		b.Free(s.k)
		return
	}
	length := int(u.Length())
	if u.Checksum() != 0 {
		sum := s.k.CsumPartial(b.Addr, length, uint32(header.PseudoHeaderChecksum(header.IPv4ProtocolUDP, info.src, info.dst, uint16(length))))
		if kernel.Fold(sum) != 0xFFFF {
			s.stats.UDPInBadChecksum++
			s.stats.UDPInErrors++
			b.Free(s.k)
			return
		}
	}
	so := s.ports[u.DstPort()]
	if so == nil || so.proto != protoUDP {
		s.stats.UDPNoPorts++
		if info.dst == s.addr {
			s.icmpUnreachable(b, info, header.ICMPv4PortUnreachable)
		}
		b.Free(s.k)
		return
	}
	n := length - header.UDPMinimumSize
	if so.queued+n > int(s.p.UDPRecvBuffer) {
		s.stats.UDPRcvbufErrors++
		b.Free(s.k)
		return
	}
	s.stats.UDPInDatagrams++
	if s.Delivered.Listened() {
		s.Delivered.Fire(b)
	}
	so.enqueue(dgram{buf: b, data: b.Addr + header.UDPMinimumSize, n: n, from: info.src, fromPort: u.SrcPort()})
}
