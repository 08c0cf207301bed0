package header_test

import (
	"bytes"
	"testing"

	"simkron/stack/header"
)

// Every parser gets a fuzz target: after IsValid returns true no getter
// may index out of range, and re-encoding what the getters return must
// reproduce the header bytes.

func FuzzEthernet(f *testing.F) {
	f.Add(make([]byte, header.EthernetMinFrameLen))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 1, 2, 3, 4, 5, 0x08, 0x06})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.Ethernet(data)
		if !h.IsValid() {
			return
		}
		fields := ethernetFieldsOf(h)
		_ = header.IsBroadcastMAC(fields.Dst) || header.IsMulticastMAC(fields.Dst)
		if got, want := len(h.Payload()), len(data)-header.EthernetHeaderLen; got != want {
			t.Fatalf("len(Payload) = %d, want %d", got, want)
		}
		b := make([]byte, header.EthernetHeaderLen)
		header.Ethernet(b).Encode(&fields)
		if !bytes.Equal(b, data[:header.EthernetHeaderLen]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:header.EthernetHeaderLen])
		}
	})
}

func FuzzARP(f *testing.F) {
	seed := make([]byte, 46)
	header.ARP(seed).Encode(&header.ARPFields{Op: header.ARPRequest, SenderIP: [4]byte{10, 0, 0, 1}, TargetIP: [4]byte{10, 0, 0, 2}})
	f.Add(seed)
	f.Add(seed[:header.ARPLen-1])
	f.Add([]byte{0, 1, 8, 0, 6, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.ARP(data)
		if !h.IsValid() {
			return
		}
		_, _ = h.HardwareAddrLen(), h.ProtocolAddrLen()
		fields := arpFieldsOf(h)
		b := make([]byte, header.ARPLen)
		header.ARP(b).Encode(&fields)
		if !bytes.Equal(b, data[:header.ARPLen]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:header.ARPLen])
		}
	})
}

func FuzzIPv4(f *testing.F) {
	f.Add(append(append([]byte(nil), knownIPv4...), make([]byte, 0x73-20)...), uint8(0))
	f.Add(append([]byte(nil), knownIPv4...), uint8(0x73-20))
	opt := make([]byte, 40)
	header.IPv4(opt).Encode(&header.IPv4Fields{TotalLength: 32, Flags: header.IPv4FlagMoreFragments, FragmentOffset: 8, Options: []byte{1, 1, 1, 1}})
	f.Add(opt, uint8(0))
	f.Add([]byte{0x4f, 0, 0, 20}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, slack uint8) {
		// slack > 0: the view holds less than the datagram that arrived.
		pktLen := len(data) + int(slack)
		h := header.IPv4(data)
		if !h.IsValid(pktLen) {
			return
		}
		hlen := h.HeaderLength()
		fields := ipv4FieldsOf(h)
		_, _, _ = h.More(), h.DontFragment(), h.IsFragment()
		if h.Version() != 4 || hlen < header.IPv4MinimumSize || hlen > len(data) {
			t.Fatalf("valid header with version %d, length %d of %d", h.Version(), hlen, len(data))
		}
		if fields.FragmentOffset%header.IPv4FragmentUnit != 0 {
			t.Fatalf("fragment offset %d not a multiple of 8", fields.FragmentOffset)
		}
		if got := len(h.Options()); got != hlen-header.IPv4MinimumSize {
			t.Fatalf("len(Options) = %d with header length %d", got, hlen)
		}
		wantPayload := min(int(h.TotalLength()), len(data)) - hlen
		if got := len(h.Payload()); got != wantPayload {
			t.Fatalf("len(Payload) = %d, want %d", got, wantPayload)
		}
		if slack == 0 && len(h.Payload()) != h.PayloadLength() {
			t.Fatalf("len(Payload) = %d, PayloadLength %d", len(h.Payload()), h.PayloadLength())
		}
		b := make([]byte, hlen)
		header.IPv4(b).Encode(&fields)
		if !bytes.Equal(b, data[:hlen]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:hlen])
		}
		c := header.IPv4(b)
		c.SetChecksum(c.CalculateChecksum())
		if !c.IsChecksumValid() {
			t.Fatalf("checksum %#04x from CalculateChecksum not valid", c.Checksum())
		}
		if h.IsChecksumValid() != (refSum(data[:hlen], 0) == 0xffff) {
			t.Fatalf("IsChecksumValid = %v, reference sum %#04x", h.IsChecksumValid(), refSum(data[:hlen], 0))
		}
		if h.Checksum() == c.Checksum() && !h.IsChecksumValid() {
			t.Fatalf("header holding CalculateChecksum's value %#04x not valid", c.Checksum())
		}
	})
}

func FuzzUDP(f *testing.F) {
	f.Add([]byte{0xc0, 0x00, 0x00, 0x35, 0x00, 0x0b, 0x67, 0x3d, 'a', 'b', 'c'}, uint8(0))
	f.Add([]byte{0, 1, 0, 2, 0, 11, 0, 0, 'a', 'b', 'c', 0xee, 0xee}, uint8(0))
	f.Add([]byte{0, 1, 0, 2, 0, 20, 0, 0}, uint8(12))
	f.Add([]byte{0, 1, 0, 2, 0, 7}, uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, slack uint8) {
		pktLen := len(data) + int(slack)
		h := header.UDP(data)
		if !h.IsValid(pktLen) {
			return
		}
		fields := udpFieldsOf(h)
		wantPayload := min(int(h.Length()), len(data)) - header.UDPMinimumSize
		if got := len(h.Payload()); got != wantPayload {
			t.Fatalf("len(Payload) = %d, want %d", got, wantPayload)
		}
		b := make([]byte, header.UDPMinimumSize)
		header.UDP(b).Encode(&fields)
		if !bytes.Equal(b, data[:header.UDPMinimumSize]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:header.UDPMinimumSize])
		}
		_ = h.IsChecksumValid(udpSrc, udpDst)
		c := header.UDP(bytes.Clone(data))
		v := c.CalculateChecksum(udpSrc, udpDst)
		if v == 0 {
			t.Fatalf("CalculateChecksum returned 0, which means none")
		}
		c.SetChecksum(v)
		if !c.IsChecksumValid(udpSrc, udpDst) {
			t.Fatalf("checksum %#04x from CalculateChecksum not valid", v)
		}
	})
}

func FuzzICMPv4(f *testing.F) {
	f.Add([]byte{0x08, 0x00, 0x33, 0x37, 0x00, 0x01, 0x00, 0x01, 'a', 'b', 'c', 'd'})
	f.Add([]byte{0x03, 0x04, 0, 0, 0, 0, 0x05, 0xdc})
	f.Add([]byte{0x0b, 0x00, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.ICMPv4(data)
		if !h.IsValid() {
			return
		}
		fields := icmpFieldsOf(h)
		_ = h.MTU()
		if got, want := len(h.Payload()), len(data)-header.ICMPv4MinimumSize; got != want {
			t.Fatalf("len(Payload) = %d, want %d", got, want)
		}
		b := make([]byte, header.ICMPv4MinimumSize)
		header.ICMPv4(b).Encode(&fields)
		if !bytes.Equal(b, data[:header.ICMPv4MinimumSize]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:header.ICMPv4MinimumSize])
		}
		_ = h.IsChecksumValid()
		c := header.ICMPv4(bytes.Clone(data))
		c.SetChecksum(c.CalculateChecksum())
		if !c.IsChecksumValid() {
			t.Fatalf("checksum %#04x from CalculateChecksum not valid", c.Checksum())
		}
	})
}

func FuzzTCP(f *testing.F) {
	syn := []byte{
		0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0,
		0x60, 0x02, 0x20, 0x00, 0x5f, 0xd3, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
	}
	f.Add(syn)
	f.Add(append(bytes.Clone(syn), "hello"...))
	f.Add(syn[:20])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0xff, 0, 0, 0, 0, 0, 0, 2, 3, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.TCP(data)
		if !h.IsValid() {
			return
		}
		off := h.DataOffset()
		fields := tcpFieldsOf(h)
		_ = fields.Flags.String()
		_, _ = header.ParseTCPOptions(h.Options())
		if got := len(h.Options()); got != off-header.TCPMinimumSize {
			t.Fatalf("len(Options) = %d with data offset %d", got, off)
		}
		if got, want := len(h.Payload()), len(data)-off; got != want {
			t.Fatalf("len(Payload) = %d, want %d", got, want)
		}
		b := make([]byte, off)
		header.TCP(b).Encode(&fields)
		want := bytes.Clone(data[:off])
		want[12] &= 0xf0 // reserved bits are not fields
		if !bytes.Equal(b, want) {
			t.Fatalf("re-encoded % x, parsed % x", b, want)
		}
		src, dst := [4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}
		_ = h.IsChecksumValid(src, dst)
		c := header.TCP(bytes.Clone(data))
		c.SetChecksum(c.CalculateChecksum(src, dst))
		if !c.IsChecksumValid(src, dst) {
			t.Fatalf("checksum %#04x from CalculateChecksum not valid", c.Checksum())
		}
	})
}

func FuzzTCPOptions(f *testing.F) {
	f.Add([]byte{2, 4, 0x05, 0xb4})
	f.Add([]byte{1, 1, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 2, 4, 0x05, 0xb4})
	f.Add([]byte{2, 0})
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, data []byte) {
		o, _ := header.ParseTCPOptions(data)
		if o.MSS != 0 && !o.HasMSS {
			t.Fatalf("MSS %d without HasMSS", o.MSS)
		}
	})
}

func FuzzChecksum(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}, uint16(0))
	f.Add([]byte{0xff}, uint16(0xffff))
	f.Fuzz(func(t *testing.T, data []byte, initial uint16) {
		if got, want := header.Checksum(data, initial), refSum(data, initial); got != want {
			t.Fatalf("Checksum = %#04x, reference %#04x", got, want)
		}
		cut := len(data) / 2 &^ 1
		if got, want := header.ChecksumCombine(header.Checksum(data[:cut], initial), header.Checksum(data[cut:], 0)), refSum(data, initial); got != want {
			t.Fatalf("combined halves %#04x, whole %#04x", got, want)
		}
	})
}

func FuzzLLC(f *testing.F) {
	f.Add([]byte{0xFE, 0xFE, 0x03, 0x81})
	f.Add([]byte{0xFE, 0xFF, 0xBF, 0x81, 0x01, 0x00})
	f.Add([]byte{0xFE, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := header.LLC(data)
		if !h.IsValid() {
			return
		}
		_, _, _ = h.Command(), h.PollFinal(), h.IsResponse()
		fields := llcFieldsOf(h)
		if len(h.Payload()) != len(data)-header.LLCHeaderLen {
			t.Fatalf("payload of %d from %d bytes", len(h.Payload()), len(data))
		}
		b := make([]byte, header.LLCHeaderLen)
		header.LLC(b).Encode(&fields)
		if !bytes.Equal(b, data[:header.LLCHeaderLen]) {
			t.Fatalf("re-encoded % x, parsed % x", b, data[:header.LLCHeaderLen])
		}
	})
}

func FuzzCLNP(f *testing.F) {
	seed := header.CLNPFields{Type: header.CLNPTypeDT, Flags: header.CLNPFlagSP | header.CLNPFlagER, Lifetime: 9, Dst: nsapB, Src: nsapA,
		Seg: header.CLNPSegmentation{ID: 1, Offset: 8, Total: 100}, Options: []byte{header.CLNPOptPadding, 1, 0}}
	b := make([]byte, header.CLNPHeaderLen(&seed)+4)
	seed.SegmentLength = uint16(len(b))
	header.CLNP(b).Encode(&seed)
	header.CLNP(b).SetChecksum(header.CLNP(b).CalculateChecksum())
	f.Add(b, uint8(0))
	f.Add(b[:20], uint8(0))
	f.Add([]byte{0x81, 11, 1, 0, 0x1c, 0, 11, 0, 0, 0, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, slack uint8) {
		h := header.CLNP(data)
		if !h.IsValid(len(data) + int(slack)) {
			return
		}
		_ = h.IsChecksumValid()
		_, _, _ = h.MoreSegments(), h.ErrorReport(), h.Payload()
		_, _ = h.Option(header.CLNPOptReasonDiscard)
		fields := clnpFieldsOf(h)
		if n := header.CLNPHeaderLen(&fields); n != h.HeaderLength() {
			t.Fatalf("fields encode to %d octets, header says %d", n, h.HeaderLength())
		}
		out := make([]byte, h.HeaderLength())
		header.CLNP(out).Encode(&fields)
		if !bytes.Equal(out, data[:h.HeaderLength()]) {
			t.Fatalf("re-encoded % x, parsed % x", out, data[:h.HeaderLength()])
		}
		// A recomputed checksum always verifies.
		header.CLNP(out).SetChecksum(header.CLNP(out).CalculateChecksum())
		if !header.FletcherValid(out) {
			t.Fatalf("recomputed checksum does not verify: % x", out)
		}
	})
}
