package inet

import (
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
