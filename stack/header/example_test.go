package header_test

import (
	"fmt"

	"simkron/stack/header"
)

// Building a UDP datagram in an Ethernet frame, innermost checksum first,
// then reading it back as a receiver does: IsValid before the getters at
// every layer.
func Example() {
	src, dst := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
	data := []byte("hello")

	const ipOff = header.EthernetHeaderLen
	const udpOff = ipOff + header.IPv4MinimumSize
	n := udpOff + header.UDPMinimumSize + len(data)
	frame := make([]byte, max(n, header.EthernetMinFrameLen)) // padded to 60

	header.Ethernet(frame).Encode(&header.EthernetFields{
		Dst:  [6]byte{0x52, 0x54, 0, 0, 0, 2},
		Src:  [6]byte{0x52, 0x54, 0, 0, 0, 1},
		Type: header.EtherTypeIPv4,
	})
	ip := header.IPv4(frame[ipOff:])
	ip.Encode(&header.IPv4Fields{
		TotalLength: uint16(n - ipOff),
		ID:          1,
		Flags:       header.IPv4FlagDontFragment,
		TTL:         64,
		Protocol:    header.IPv4ProtocolUDP,
		Src:         src,
		Dst:         dst,
	})
	ip.SetChecksum(ip.CalculateChecksum())
	udp := header.UDP(frame[udpOff:n])
	udp.Encode(&header.UDPFields{SrcPort: 5001, DstPort: 5002, Length: uint16(n - udpOff)})
	copy(udp.Payload(), data)
	udp.SetChecksum(udp.CalculateChecksum(src, dst))

	// Receive.
	eth := header.Ethernet(frame)
	if !eth.IsValid() || eth.Type() != header.EtherTypeIPv4 {
		return
	}
	rip := header.IPv4(eth.Payload())
	if !rip.IsValid(len(rip)) || !rip.IsChecksumValid() || rip.Protocol() != header.IPv4ProtocolUDP {
		return
	}
	rudp := header.UDP(rip.Payload()) // link padding already dropped
	if !rudp.IsValid(len(rudp)) || !rudp.IsChecksumValid(rip.Src(), rip.Dst()) {
		return
	}
	fmt.Printf("frame %d bytes, IP checksum %#04x, UDP checksum %#04x\n", len(frame), rip.Checksum(), rudp.Checksum())
	fmt.Printf("%d.%d.%d.%d:%d → port %d: %q\n", rip.Src()[0], rip.Src()[1], rip.Src()[2], rip.Src()[3],
		rudp.SrcPort(), rudp.DstPort(), rudp.Payload())
	// Output:
	// frame 60 bytes, IP checksum 0x26c9, UDP checksum 0x80ec
	// 10.0.0.1:5001 → port 5002: "hello"
}

// Reading the MSS from a SYN's options (RFC 879: 536 when absent).
func ExampleParseTCPOptions() {
	syn := make([]byte, header.TCPMinimumSize+header.TCPOptionMSSLen)
	opts := make([]byte, header.TCPOptionMSSLen)
	header.PutTCPMSSOption(opts, 1460)
	header.TCP(syn).Encode(&header.TCPFields{SrcPort: 1024, DstPort: 80, Flags: header.TCPFlagSYN, Window: 8192, Options: opts})

	tcp := header.TCP(syn)
	if !tcp.IsValid() {
		return
	}
	mss := uint16(header.TCPDefaultMSS)
	if o, ok := header.ParseTCPOptions(tcp.Options()); ok && o.HasMSS {
		mss = o.MSS
	}
	fmt.Println(tcp.Flags(), mss)
	// Output: SYN 1460
}
